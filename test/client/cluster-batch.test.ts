/**
 * A batch through the cluster's client goes as one call per partition, each to its owner, so
 * its shares do not fail together. Two real servers, each over a queue of its own, answer
 * GET /v1/cluster as the two nodes of one group (node a owns partition 0, node b partition 1);
 * node b takes inputs of at most 8 bytes, so it refuses whole a share holding a larger one.
 * Before: the call rejected while node a's share was written (the caller, told nothing was done,
 * submitted it again). Now each item of the refused share answers the refusal, the others
 * their tickets; when every share is refused the call rejects, as one server's would.
 */
import assert from 'node:assert/strict';
import { describe, it, type TestContext } from 'node:test';
import { connect } from '../../src/client/index.ts';
import { isRunlogError } from '../../src/errors.ts';
import { openMemoryLog } from '../../src/log/memory/memory-log.ts';
import { partitionOf } from '../../src/log/partitioner.ts';
import { openRunQueueOnLog } from '../../src/queue/open-run-queue.ts';
import type { RunQueue } from '../../src/queue/run-queue.ts';
import type { SubmitRequest } from '../../src/queue/types.ts';
import { openAuthenticator } from '../../src/server/auth.ts';
import { startServer } from '../../src/server/start-server.ts';
import { onCleanup } from '../support/cleanup.ts';
import { Worker } from '../../src/worker/worker.ts';
import type { WorkerEvent } from '../../src/worker/types.ts';
import { runUntilCleanup } from '../support/cleanup.ts';
import { quietLogger } from './fixtures.ts';

const GROUP = 'batch-nodes';

/** Node a (partition 0) and node b (partition 1, inputs of at most `bMaxInputBytes`), and a cluster client of them. */
async function twoNodes(t: TestContext, bMaxInputBytes: number) {
  const urls = ['', ''];
  const queues: RunQueue[] = [];
  for (const [i, maxInputBytes] of [1024, bMaxInputBytes].entries()) {
    const queue = await openRunQueueOnLog(await openMemoryLog({ partitions: 2 }), { maxInputBytes });
    onCleanup(t, () => queue.stop());
    const self = { node: `node-${i}`, url: '' };
    const cluster = {
      describe: () => ({
        group: GROUP,
        generation: 1,
        partitions: 2,
        self: { ...self, url: urls[i]! },
        members: urls.map((url, n) => ({ node: `node-${n}`, url })),
        owners: [...urls],
      }),
    };
    const server = await startServer({
      queue,
      log: queue.log,
      authenticator: openAuthenticator(),
      logger: quietLogger,
      host: '127.0.0.1',
      port: 0,
      maxInputBytes,
      cluster,
    });
    onCleanup(t, () => server.close());
    urls[i] = server.url;
    queues.push(queue);
  }
  const client = await connect({ url: urls[0]!, retry: { maxMs: 2_000 } });
  onCleanup(t, () => client.stop());
  assert.equal((client as { group?: string }).group, GROUP, 'connect answered the cluster client');
  return { client, queues };
}

/** A thread of tenant acme on `partition` (of 2). */
function threadOn(partition: number, from: number): string {
  for (let n = from; ; n++) if (partitionOf('acme', `t${n}`, 2) === partition) return `t${n}`;
}

const item = (thread: string, input: string): SubmitRequest => ({ tenant: 'acme', thread, agent: 'build', input });

describe("a cluster client's batch, one share per node", () => {
  it('a share one node refuses whole answers its items with the refusal; the other share is written and answered', async (t) => {
    const { client, queues } = await twoNodes(t, 8);
    const onA = threadOn(0, 0);
    const onB = threadOn(1, 0);
    const answers = await client.submitBatch([item(onA, 'a1'), item(onB, 'b-too-large'), item(onA, 'a2'), item(onB, 'b2')]);
    assert.deepEqual(
      answers.map((answer) => ('ticket' in answer ? 'ticket' : answer.error.code)),
      ['ticket', 'InvalidArgument', 'ticket', 'InvalidArgument'],
    );
    const refusal = (answers[1] as { error: Error }).error;
    assert.match(
      refusal.message,
      /partition 1 \(1, 3\).*input is 11 bytes/,
      'the refusal names its items in the batch, and what was wrong',
    );
    const onNodeA = await queues[0]!.openEntries('acme', onA);
    assert.deepEqual(
      onNodeA.map((entry) => Buffer.from(entry.input).toString()),
      ['a1', 'a2'],
      "node a's share was written",
    );
    assert.deepEqual(await queues[1]!.openEntries('acme', onB), [], "node b's share was not");
  });

  it('when every share is refused the call rejects, nothing written', async (t) => {
    const { client, queues } = await twoNodes(t, 8);
    const onB = threadOn(1, 0);
    await assert.rejects(client.submitBatch([item(onB, 'b-too-large'), item(threadOn(1, 100), 'b2')]), (e: unknown) =>
      isRunlogError(e, 'InvalidArgument'),
    );
    assert.deepEqual(await queues[1]!.openEntries('acme', onB), []);
  });

  it("a Worker's closes of one turn: a result too large for node b fails its own run only, on both nodes the others close", async (t) => {
    const { client } = await twoNodes(t, 8);
    const threads = { a1: threadOn(0, 0), a2: threadOn(0, 50), ok: threadOn(1, 0), huge: threadOn(1, 50) };
    const tickets = new Map<string, string>();
    for (const [name, thread] of Object.entries(threads))
      tickets.set(name, (await client.submit({ ...item(thread, 'i'), maxAttempts: 1 })).entryId);
    const names = new Map([...tickets].map(([name, entryId]) => [entryId, name]));
    // Every handler waits until all four run, then they answer in one turn: their closes leave together, a share per node.
    let allRunning!: () => void;
    const gate = new Promise<void>((resolve) => (allRunning = resolve));
    let running = 0;
    const events: WorkerEvent[] = [];
    const worker = new Worker(client, { concurrency: 8, logger: () => {}, onEvent: (event) => void events.push(event) });
    worker.handle('build', async ({ entry }) => {
      if (++running === tickets.size) allRunning();
      await gate;
      return names.get(entry.entryId) === 'huge' ? 'eleven byte' : 'ok';
    });
    runUntilCleanup(t, worker);
    await worker.waitIdle();
    const outcomes: Record<string, string | null> = {};
    for (const [name, entryId] of tickets) outcomes[name] = (await client.entry('acme', entryId)).outcome;
    assert.deepEqual(outcomes, { a1: 'succeeded', a2: 'succeeded', ok: 'succeeded', huge: 'failed' });
    const parked = events.filter((event) => event.type === 'parked').map((event) => names.get((event as { entryId: string }).entryId));
    assert.deepEqual(parked, ['huge']);
  });
});
