/**
 * A refusal is answered only once what it rests on is durable (DESIGN invariant 7): the view
 * runs ahead of the log by the appends in flight, and a refusal decided against it (EntryClosed
 * by a close in flight, SubmissionKeyReused by a keyed submission in flight, ThreadBusy by a
 * submission in flight) named state a failed append, or a crash before its fsync, then undid.
 * Found by the hostile tester (2026-12-07): over HTTP, a cancel answered 409 EntryClosed and,
 * after a kill -9, the entry was open again (5 of 7 trials).
 *
 * The log is a real memory log whose appends are held, then let through or failed, as a disk
 * fault would fail them.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isRunlogError } from '../../src/errors.ts';
import { APPEND_BUILT, type EventLog } from '../../src/log/event-log.ts';
import { openMemoryLog } from '../../src/log/memory/memory-log.ts';
import { openRunQueueOnLog } from '../../src/queue/open-run-queue.ts';
import type { RunQueue } from '../../src/queue/run-queue.ts';
import type { Entry, Lease } from '../../src/queue/types.ts';

/** A memory log whose appends are held while `holding` (each then let through or failed). */
async function heldLog(): Promise<{ log: EventLog; hold(): void; release(): void; fail(): void }> {
  const log = await openMemoryLog({ partitions: 1 });
  const held: Array<{ go: () => void; fail: () => void }> = [];
  let holding = false;
  const methods = log as unknown as Record<string | symbol, ((...args: unknown[]) => Promise<unknown>) | undefined>;
  for (const name of ['append', APPEND_BUILT]) {
    const real = methods[name]?.bind(log);
    if (real === undefined) continue;
    methods[name] = (...args: unknown[]) =>
      holding
        ? new Promise((resolve, reject) =>
            held.push({ go: () => void real(...args).then(resolve, reject), fail: () => reject(new Error('EIO: a disk fault')) }),
          )
        : real(...args);
  }
  const settle = (how: 'go' | 'fail') => {
    holding = false;
    for (const append of held.splice(0)) append[how]();
  };
  return { log, hold: () => (holding = true), release: () => settle('go'), fail: () => settle('fail') };
}

/** How `promise` has settled after a few turns: 'pending' if it has not. */
async function stateAfterTurns(promise: Promise<unknown>): Promise<'pending' | 'settled'> {
  let settled = false;
  promise.then(
    () => (settled = true),
    () => (settled = true),
  );
  for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
  return settled ? 'settled' : 'pending';
}

function codeOf(error: unknown): string {
  return isRunlogError(error) ? error.code : String(error);
}

async function queueOn(log: EventLog): Promise<RunQueue> {
  return openRunQueueOnLog(log, { onWarning: () => {} });
}

/**
 * A queue on a held log, with an entry leased and its close in flight (held), and the log's
 * controls; the queue is stopped after `body`.
 */
async function withCloseInFlight(
  body: (it: { queue: RunQueue; entryId: string; lease: Lease; closing: Promise<Entry>; release(): void; fail(): void }) => Promise<void>,
): Promise<void> {
  const { log, hold, release, fail } = await heldLog();
  const queue = await queueOn(log);
  try {
    const { entryId } = await queue.submit({ tenant: 'acme', thread: 'c', agent: 'a', input: 'x' });
    const { lease } = (await queue.take({ agents: ['a'], holder: 'w', ttlMs: 60_000 }))!;
    hold();
    const closing = queue.close(lease, { status: 'succeeded', result: 'done' });
    closing.catch(() => undefined); // each test awaits it as it expects
    await body({ queue, entryId, lease, closing, release, fail });
  } finally {
    await queue.stop();
  }
}

test('a cancel refused EntryClosed by a close in flight waits for it: the close failing, the cancel is decided again and cancels', () =>
  withCloseInFlight(async ({ queue, entryId, closing, fail }) => {
    const cancelling = queue.cancel('acme', entryId, 'stop');
    assert.equal(await stateAfterTurns(cancelling), 'pending', 'no answer while the close it rests on is in flight');
    fail();
    await assert.rejects(closing, /EIO/);
    const cancelled = await cancelling;
    assert.equal(cancelled.status, 'closed');
    assert.equal(cancelled.outcome, 'cancelled', 'decided again on the rebuilt view, where the close never happened');
  }));

test('a cancel refused EntryClosed by a close in flight is answered once the close is durable', () =>
  withCloseInFlight(async ({ queue, entryId, closing, release }) => {
    const cancelling = queue.cancel('acme', entryId, 'stop');
    cancelling.catch(() => undefined);
    assert.equal(await stateAfterTurns(cancelling), 'pending');
    release();
    assert.equal((await closing).outcome, 'succeeded');
    await assert.rejects(cancelling, (error: unknown) => codeOf(error) === 'EntryClosed');
  }));

test('a keyed submission refused SubmissionKeyReused by a submission in flight waits for it: that one failing, the second is created', async () => {
  const { log, hold, fail } = await heldLog();
  const queue = await queueOn(log);
  try {
    hold();
    const first = queue.submit({ tenant: 'acme', thread: 'k', agent: 'a', input: 'one', key: 'K' });
    first.catch(() => undefined);
    const second = queue.submit({ tenant: 'acme', thread: 'k', agent: 'a', input: 'two', key: 'K' });
    assert.equal(await stateAfterTurns(second), 'pending');
    fail();
    await assert.rejects(first, /EIO/);
    const ticket = await second;
    assert.equal(ticket.created, true);
    const entry = await queue.entry('acme', ticket.entryId);
    assert.equal(new TextDecoder().decode(entry.input), 'two');
  } finally {
    await queue.stop();
  }
});

test("a submission refused ThreadBusy (strategy 'reject') by a submission in flight waits for it: that one failing, it is created", async () => {
  const { log, hold, fail } = await heldLog();
  const queue = await queueOn(log);
  try {
    hold();
    const first = queue.submit({ tenant: 'acme', thread: 'r', agent: 'a', input: 'one' });
    first.catch(() => undefined);
    const second = queue.submit({ tenant: 'acme', thread: 'r', agent: 'a', input: 'two', strategy: 'reject' });
    assert.equal(await stateAfterTurns(second), 'pending');
    fail();
    await assert.rejects(first, /EIO/);
    assert.equal((await second).created, true);
    assert.equal((await queue.openEntries('acme', 'r')).length, 1);
  } finally {
    await queue.stop();
  }
});

test('a batch whose items are all refused answers once the appends in flight are durable, and fails with them', () =>
  withCloseInFlight(async ({ queue, entryId, lease, closing, fail }) => {
    const batch = queue.closeBatch([{ lease, request: { status: 'failed', error: 'late' } }]);
    batch.catch(() => undefined);
    assert.equal(await stateAfterTurns(batch), 'pending', 'its refusal rests on the close in flight');
    fail();
    await assert.rejects(closing, /EIO/);
    await assert.rejects(batch, /EIO/, 'failed with the append it rested on');
    assert.equal((await queue.entry('acme', entryId)).status, 'open', 'the close never happened');
  }));

test('a decision that appends nothing (deleteThread of a thread a cancel in flight empties) waits for it: the cancel failing, the deletion is decided again and deletes', async () => {
  const { log, hold, fail } = await heldLog();
  const queue = await queueOn(log);
  try {
    const { entryId } = await queue.submit({ tenant: 'acme', thread: 'd', agent: 'a', input: 'x' });
    hold();
    const cancelling = queue.cancel('acme', entryId, 'stop');
    cancelling.catch(() => undefined);
    const deleting = queue.deleteThread('acme', 'd');
    assert.equal(await stateAfterTurns(deleting), 'pending', 'nothing to delete rests on the cancel in flight');
    fail();
    await assert.rejects(cancelling, /EIO/);
    assert.equal(await deleting, 1, 'decided again on the rebuilt view, where the entry is open');
    assert.equal((await queue.openEntries('acme', 'd')).length, 0);
  } finally {
    await queue.stop();
  }
});

test('a take that finds nothing because of a lease in flight waits for it: the lease failing, it takes the entry', async () => {
  const { log, hold, fail } = await heldLog();
  const queue = await queueOn(log);
  try {
    const { entryId } = await queue.submit({ tenant: 'acme', thread: 't', agent: 'a', input: 'x' });
    hold();
    const first = queue.take({ agents: ['a'], holder: 'w1', ttlMs: 60_000 });
    first.catch(() => undefined);
    const second = queue.take({ agents: ['a'], holder: 'w2', ttlMs: 60_000 });
    assert.equal(await stateAfterTurns(second), 'pending', 'nothing to take rests on the lease in flight');
    fail();
    await assert.rejects(first, /EIO/);
    const taken = await second;
    assert.equal(taken?.entry.entryId, entryId, 'taken again on the rebuilt view, where the entry is free');
  } finally {
    await queue.stop();
  }
});
