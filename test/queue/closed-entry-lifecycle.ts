/**
 * A closed entry's life in the ticket index, on a log a test opens (file, Kafka), with no
 * closed-entry cache (every read of a closed entry goes to the log): it keeps its submission
 * key and run ids while retained, across a restart; once pruned it reads TicketExpired (also
 * after a compaction and another restart), and its key and run id are free again.
 */
import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import type { EventLog } from '../../src/log/event-log.ts';
import { openRunQueueOnLog } from '../../src/queue/open-run-queue.ts';
import { FakeClock, submitOf } from '../contract/fixtures.ts';
import { onCleanup } from '../support/cleanup.ts';

/** `openLog` opens the same log each time (the test's restarts). */
export async function closedEntryLifecycle(t: TestContext, openLog: () => Promise<EventLog>): Promise<void> {
  const clock = new FakeClock();
  let queue = await openRunQueueOnLog(await openLog(), { clock: clock.read, closedCacheBytes: 0 });
  onCleanup(t, () => queue.stop());
  const a = await queue.submit(submitOf('acme', 't1', { key: 'k' }));
  const leaseA = (await queue.take({ agents: ['build'], holder: 'w', ttlMs: 1_000 }))!.lease;
  await queue.startAttempt(leaseA, 'run-a');
  await queue.close(leaseA, { status: 'succeeded', result: 'done' });
  const b = await queue.submit(submitOf('acme', 't1'));
  const whole = await queue.entry('acme', a.entryId);
  assert.deepEqual(
    [whole.status, whole.outcome, whole.attempts.map((x) => x.runId), Buffer.from(whole.result!).toString()],
    ['closed', 'succeeded', ['run-a'], 'done'],
  );
  const retained = async (): Promise<void> => {
    assert.deepEqual(await queue.entry('acme', a.entryId), whole);
    await assert.rejects(queue.entry('globex', a.entryId), { code: 'TicketExpired' });
    assert.deepEqual(await queue.submit(submitOf('acme', 't1', { key: 'k' })), { ...a, created: false });
    await assert.rejects(queue.submit(submitOf('acme', 't1', { key: 'k', input: 'other' })), { code: 'SubmissionKeyReused' });
    await assert.rejects(queue.cancel('acme', a.entryId), { code: 'EntryClosed' });
    clock.advance(2_000); // past any lease of b
    const leaseB = (await queue.take({ agents: ['build'], holder: 'w', ttlMs: 1_000 }))!.lease;
    assert.equal(leaseB.entryId, b.entryId);
    await assert.rejects(queue.startAttempt(leaseB, 'run-a'), (error: { code: string; message: string }) => {
      assert.equal(error.code, 'RunIdReused');
      assert.match(error.message, new RegExp(a.entryId));
      return true;
    });
  };
  await retained();
  await queue.stop();
  queue = await openRunQueueOnLog(await openLog(), { clock: clock.read, closedCacheBytes: 0 });
  await retained();
  assert.equal(await queue.prune(0, 10), 1);
  await assert.rejects(queue.entry('acme', a.entryId), { code: 'TicketExpired' });
  assert.equal(await queue.awaitClosed('acme', a.entryId).catch((error: { code: string }) => error.code), 'TicketExpired');
  clock.advance(2_000);
  const leaseB = (await queue.take({ agents: ['build'], holder: 'w2', ttlMs: 1_000 }))!.lease;
  assert.equal((await queue.startAttempt(leaseB, 'run-a')).runId, 'run-a', 'the run id of a pruned entry is free again');
  await queue.close(leaseB, { status: 'succeeded' });
  const again = await queue.submit(submitOf('acme', 't1', { key: 'k' }));
  assert.ok(again.created && again.entryId !== a.entryId, 'the key of a pruned entry names a new entry');
  await queue.log.compact(0);
  await queue.stop();
  queue = await openRunQueueOnLog(await openLog(), { clock: clock.read, closedCacheBytes: 0 });
  await assert.rejects(queue.entry('acme', a.entryId), { code: 'TicketExpired' });
  assert.equal((await queue.entry('acme', b.entryId)).outcome, 'succeeded');
  assert.deepEqual(await queue.submit(submitOf('acme', 't1', { key: 'k' })), { ...again, created: false });
}
