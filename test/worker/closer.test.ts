/**
 * The closes a Worker's runs make in one turn go to the queue together (closer.ts): to an
 * in-process RunQueue as its closeRuns (in-process.ts), which answers each item's refusal and
 * builds no entry. Each run still hears only its own outcome: one close refused (its entry
 * cancelled under it) or one result too large leaves the others closed, on a real file log.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { openFileLog } from '../../src/log/file/file-log.ts';
import { openRunQueueOnLog } from '../../src/queue/open-run-queue.ts';
import { SUCCEEDED_RUN, closeRuns } from '../../src/queue/in-process.ts';
import type { RunQueue } from '../../src/queue/run-queue.ts';
import { Worker } from '../../src/worker/worker.ts';
import type { WorkerEvent } from '../../src/worker/types.ts';
import { connect } from '../../src/client/index.ts';
import { openAuthenticator } from '../../src/server/auth.ts';
import { startServer } from '../../src/server/start-server.ts';
import type { LeaseClose } from '../../src/queue/types.ts';
import { submitOf } from '../contract/fixtures.ts';
import { quietLogger } from '../client/fixtures.ts';
import { wrapQueue } from '../server/fixtures.ts';
import { onCleanup, runUntilCleanup, scratchDir } from '../support/cleanup.ts';

async function fileQueue(t: Parameters<typeof scratchDir>[0], maxInputBytes = 1024): Promise<RunQueue> {
  const dir = await scratchDir(t, 'runlog-closer-');
  const queue = await openRunQueueOnLog(await openFileLog({ dir, partitions: 2 }), { maxInputBytes });
  onCleanup(t, () => queue.stop());
  return queue;
}

describe('closeRuns (the in-process Worker closes)', () => {
  it("answers each item's refusal or null, closes the others durably, and checks a request as close does", async (t) => {
    const queue = await fileQueue(t);
    for (const thread of ['a', 'b', 'c', 'd']) await queue.submit(submitOf('acme', thread));
    const started = await queue.takeStarted({ agents: ['build'], holder: 'w', ttlMs: 60_000, max: 4 });
    assert.equal(started.length, 4);
    const [a, b, c, d] = started.map((s) => s.lease);
    await queue.cancel('acme', b!.entryId);
    const stale = { ...c!, epoch: c!.epoch + 1 };
    const refusals = await queue[closeRuns]([
      { lease: a!, request: SUCCEEDED_RUN },
      { lease: b!, request: SUCCEEDED_RUN },
      { lease: stale, request: SUCCEEDED_RUN },
      { lease: d!, request: { status: 'failed', error: 'it broke' } },
    ]);
    assert.equal(refusals[0], null);
    assert.equal(refusals[1]?.code, 'EntryClosed');
    assert.equal(refusals[2]?.code, 'LeaseNotCurrent');
    assert.equal(refusals[3], null);
    assert.equal((await queue.entry('acme', a!.entryId)).outcome, 'succeeded');
    assert.equal((await queue.entry('acme', c!.entryId)).status, 'open');
    const failed = await queue.entry('acme', d!.entryId);
    assert.deepEqual([failed.outcome, failed.error], ['failed', 'it broke']);
    const huge = { lease: c!, request: { status: 'succeeded' as const, result: new Uint8Array(4096) } };
    await assert.rejects(queue[closeRuns]([huge]), { code: 'InvalidArgument', message: /4096 bytes, more than the limit of 1024/ });
    await assert.rejects(queue[closeRuns]([{ lease: c!, request: { status: 'done' } as never }]), { code: 'InvalidArgument' });
    assert.equal((await queue.entry('acme', c!.entryId)).status, 'open', 'a refused batch writes nothing');
  });
});

describe("a Worker's closes of one turn", () => {
  it('reach each run alone: a result too large fails its own run only, a cancelled entry is lost alone', async (t) => {
    const queue = await fileQueue(t);
    const threads = ['ok-1', 'huge', 'ok-2', 'cancelled', 'ok-3'];
    const tickets = new Map<string, string>();
    for (const thread of threads) tickets.set(thread, (await queue.submit(submitOf('acme', thread, { maxAttempts: 1 }))).entryId);
    const events: WorkerEvent[] = [];
    const worker = new Worker(queue, { concurrency: 8, logger: () => {}, onEvent: (event) => void events.push(event) });
    // Every handler answers in the turn it is called: their closes leave together.
    worker.handle('build', ({ entry }) => {
      if (entry.thread === 'huge') return new Uint8Array(4096);
      if (entry.thread === 'cancelled') void queue.cancel('acme', entry.entryId);
      return `done ${entry.thread}`;
    });
    runUntilCleanup(t, worker);
    await worker.waitIdle();
    const outcomes = new Map<string, string | null>();
    for (const [thread, entryId] of tickets) outcomes.set(thread, (await queue.entry('acme', entryId)).outcome);
    assert.deepEqual(Object.fromEntries(outcomes), {
      'ok-1': 'succeeded',
      huge: 'failed',
      'ok-2': 'succeeded',
      cancelled: 'cancelled',
      'ok-3': 'succeeded',
    });
    const byType = (type: string): string[] =>
      events.filter((event) => event.type === type).map((event) => (event as { entryId: string }).entryId);
    assert.deepEqual(byType('succeeded').sort(), [tickets.get('ok-1'), tickets.get('ok-2'), tickets.get('ok-3')].sort());
    assert.deepEqual(byType('parked'), [tickets.get('huge')]);
    assert.deepEqual(byType('lost'), [tickets.get('cancelled')]);
    const result = await queue.entry('acme', tickets.get('ok-2')!);
    assert.equal(Buffer.from(result.result!).toString(), 'done ok-2');
  });

  it('over HTTP go as one close-batch request, not one close each', async (t) => {
    const queue = await fileQueue(t);
    const batches: number[] = [];
    let singles = 0;
    const counted = wrapQueue(queue, {
      closeBatch: (closes: readonly LeaseClose[]) => (batches.push(closes.length), queue.closeBatch(closes)),
      close: (...args: Parameters<RunQueue['close']>) => (singles++, queue.close(...args)),
    });
    const server = await startServer({
      queue: counted,
      log: queue.log,
      authenticator: openAuthenticator(),
      logger: quietLogger,
      host: '127.0.0.1',
      port: 0,
      maxInputBytes: queue.maxInputBytes,
    });
    onCleanup(t, () => server.close());
    const client = await connect({ url: server.url });
    onCleanup(t, () => client.stop());
    const threads = ['a', 'b', 'c', 'd'];
    for (const thread of threads) await queue.submit(submitOf('acme', thread));
    // Every handler waits until all four run, then they answer in one turn.
    let allRunning!: () => void;
    const gate = new Promise<void>((resolve) => (allRunning = resolve));
    let running = 0;
    const worker = new Worker(client, { concurrency: 8, logger: () => {} });
    worker.handle('build', async () => {
      if (++running === threads.length) allRunning();
      await gate;
    });
    runUntilCleanup(t, worker);
    await worker.waitIdle();
    assert.deepEqual({ batches, singles }, { batches: [4], singles: 0 });
  });
});
