/**
 * An answer carries at most MAX_ANSWER_BYTES of inputs and results (requests.ts): it is built
 * whole once its commands are durable (over HTTP one JSON text, and V8's strings end at ~512M
 * characters), so it must fit. On a real file log, entries of 1 MiB: a takeStarted asking for
 * more than fit stops before the entry that would pass the bound (the rest stay waiting, taken
 * by the next call); a closeBatch whose answer would pass it is refused whole, InvalidArgument,
 * nothing written, and the same closes in two batches are answered; over HTTP, the same. A
 * closeBatch item naming a partition the queue does not have is that item's refusal alone.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { connect } from '../../src/client/index.ts';
import { isRunlogError } from '../../src/errors.ts';
import { openFileLog } from '../../src/log/file/file-log.ts';
import { openRunQueueOnLog } from '../../src/queue/open-run-queue.ts';
import { MAX_ANSWER_BYTES } from '../../src/queue/requests.ts';
import type { LeaseClose, RunQueueApi, Started } from '../../src/queue/types.ts';
import { openAuthenticator } from '../../src/server/auth.ts';
import { startServer } from '../../src/server/index.ts';
import { logSize } from '../contract/fixtures.ts';
import { Worker } from '../../src/worker/worker.ts';
import { RecordingLogger } from '../server/fixtures.ts';
import { onCleanup, scratchDir } from '../support/cleanup.ts';

const MIB = 1024 * 1024;
/** Entries of 1 MiB: in base64 (4/3), a take answers at most this many. */
const FIT = Math.floor(MAX_ANSWER_BYTES / ((4 * MIB) / 3));
/** Two takes' worth. */
const ENTRIES = 2 * FIT;

async function fileQueue(t: import('node:test').TestContext) {
  const dir = await scratchDir(t, 'runlog-answer-bytes-');
  const log = await openFileLog({ dir, partitions: 2 });
  const queue = await openRunQueueOnLog(log, { snapshots: false, maxInputBytes: MIB });
  onCleanup(t, () => queue.stop());
  return { log, queue };
}

async function submitLarge(queue: RunQueueApi): Promise<void> {
  const input = new Uint8Array(MIB).fill(3);
  for (let i = 0; i < ENTRIES; i++) await queue.submit({ tenant: 'acme', thread: `t${i}`, agent: 'big', input });
}

/** fileQueue's queue served over HTTP. */
async function servedQueue(t: import('node:test').TestContext) {
  const { log, queue } = await fileQueue(t);
  const server = await startServer({
    queue,
    log,
    authenticator: openAuthenticator(),
    logger: new RecordingLogger(),
    host: '127.0.0.1',
    port: 0,
    maxInputBytes: MIB,
  });
  onCleanup(t, () => server.close());
  return { log, queue, server };
}

const succeeded = (started: readonly Started[]): LeaseClose[] => started.map(({ lease }) => ({ lease, request: { status: 'succeeded' } }));

async function boundedAnswers(queue: RunQueueApi, size: () => Promise<bigint>): Promise<void> {
  await submitLarge(queue);
  const taken: Started[] = [];
  for (let takes = 0; taken.length < ENTRIES; takes++) {
    assert.ok(takes < ENTRIES, 'every entry is taken, a bounded answer at a time');
    const started = await queue.takeStarted({ agents: ['big'], holder: 'w', ttlMs: 600_000, max: 1000 });
    assert.ok(started.length >= 1 && started.length <= FIT, `a take stops before the entry that would pass the bound (${started.length})`);
    taken.push(...started);
  }
  assert.equal(taken.length, ENTRIES);

  const all = succeeded(taken);
  const before = await size();
  await assert.rejects(
    queue.closeBatch(all),
    (e: unknown) =>
      isRunlogError(e, 'InvalidArgument') && /answer would take up to \d+ bytes/.test(e.message) && e.message.includes('smaller batches'),
  );
  assert.equal(await size(), before, 'nothing written');
  const answers = [];
  const share = Math.max(1, Math.floor(FIT / 2));
  for (let at = 0; at < all.length; at += share) answers.push(...(await queue.closeBatch(all.slice(at, at + share))));
  assert.deepEqual(
    answers.map((answer) => ('entry' in answer ? answer.entry.status : answer.error.code)),
    all.map(() => 'closed'),
  );
}

describe('answers carry at most MAX_ANSWER_BYTES', () => {
  it('in process: takeStarted stops at the bound, closeBatch past it is refused whole', async (t) => {
    const { log, queue } = await fileQueue(t);
    await boundedAnswers(queue, () => logSize(log));
  });

  it('over HTTP: the same, every answer sent', async (t) => {
    const { log, server } = await servedQueue(t);
    const client = await connect({ url: server.url });
    onCleanup(t, () => client.stop());
    await boundedAnswers(client, () => logSize(log));
  });

  it('over HTTP, text counts at its worst: entries whose metadata JSON escapes six to one are answered within the bound', async (t) => {
    const { queue, server } = await servedQueue(t);
    // Nearly 16 KiB of metadata (the most allowed), each character written as a six-character escape in JSON: ~96 KiB an entry.
    const metadata = { note: '\u0001'.repeat(16 * 1024 - 8) };
    for (let n = 0; n < 400; n += 100)
      await queue.submitBatch(
        Array.from({ length: 100 }, (_, i) => ({ tenant: 'acme', thread: `m${n + i}`, agent: 'meta', input: 'x', metadata })),
      );
    const response = await fetch(`${server.url}/v1/take-started`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ agents: ['meta'], holder: 'w', ttlMs: 600_000, max: 400 }),
    });
    const text = await response.text();
    assert.equal(response.status, 200, text.slice(0, 200));
    assert.ok(text.length <= MAX_ANSWER_BYTES, `the answer is ${text.length} bytes`);
    const taken = (JSON.parse(text) as { started: unknown[] }).started.length;
    assert.ok(taken > 0 && taken < 400, `${taken} of 400 taken: the rest wait for the next take`);
  });

  // A take whose answer stops before an entry of over half the bound holds under half of it: the
  // Worker reads it as empty, and its idle wait asks nextDueAt, which must answer "takeable now".
  // Before: the entry waited for the next work signal or pollMs (here ten minutes), 5 s in the tester's run.
  for (const over of ['in process', 'over HTTP'] as const)
    it(`${over}, a Worker whose take stopped before a large entry takes it while its other runs go on`, { timeout: 120_000 }, async (t) => {
      const big = 13 * MIB; // 17.3 MiB in base64: it passes the bound after any other entry
      const dir = await scratchDir(t, 'runlog-answer-bytes-');
      const log = await openFileLog({ dir, partitions: 2 });
      const queue = await openRunQueueOnLog(log, { snapshots: false, maxInputBytes: big });
      onCleanup(t, () => queue.stop());
      let workerQueue: RunQueueApi = queue;
      if (over === 'over HTTP') {
        const authenticator = openAuthenticator();
        const server = await startServer({
          queue,
          log,
          authenticator,
          logger: new RecordingLogger(),
          host: '127.0.0.1',
          port: 0,
          maxInputBytes: big,
        });
        onCleanup(t, () => server.close());
        const client = await connect({ url: server.url });
        onCleanup(t, () => client.stop());
        workerQueue = client;
      }
      const tickets = [];
      for (const [thread, input] of [
        ['long1', 'a'],
        ['long2', 'b'],
        ['small', 'c'],
        ['big', new Uint8Array(big).fill(5)],
      ] as const)
        tickets.push(await queue.submit({ tenant: 'acme', thread, agent: 'w', input }));
      // The small entries' handlers end only once the large one has started: with four slots, its take must not wait for them.
      let bigStarted!: () => void;
      const gate = new Promise<void>((resolve) => (bigStarted = resolve));
      const worker = new Worker(workerQueue, { concurrency: 4, pollMs: 600_000, logger: () => {} });
      worker.handle('w', async ({ entry }) => {
        if (entry.input.length === big) bigStarted();
        else await gate;
      });
      const stop = new AbortController();
      const running = worker.run(stop.signal);
      const closed = await Promise.all(tickets.map((ticket) => queue.awaitClosed('acme', ticket.entryId, { timeoutMs: 60_000 })));
      stop.abort();
      await running;
      assert.deepEqual(
        closed.map((entry) => entry?.outcome ?? 'still open after 60 s'),
        ['succeeded', 'succeeded', 'succeeded', 'succeeded'],
      );
    });

  it('a closeBatch item of a partition the queue does not have is its own refusal; the others close', async (t) => {
    const { queue } = await fileQueue(t);
    await queue.submit({ tenant: 'acme', thread: 't', agent: 'a', input: 'x' });
    const [started] = await queue.takeStarted({ agents: ['a'], holder: 'w', ttlMs: 60_000 });
    const stranger = { ...started!.lease, entryId: `77-${started!.lease.entryId.split('-')[1]}` };
    const answers = await queue.closeBatch([
      { lease: stranger, request: { status: 'succeeded' } },
      { lease: started!.lease, request: { status: 'succeeded' } },
    ]);
    assert.ok('error' in answers[0]! && isRunlogError(answers[0].error, 'TicketNotFound'), JSON.stringify(answers[0]));
    assert.ok('entry' in answers[1]! && answers[1].entry.status === 'closed');
  });
});
