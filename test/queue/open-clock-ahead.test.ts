/**
 * F6: a queue opened with ownership 'all' on a log whose partitions were stamped by nodes
 * with different clocks (a cluster's log, served by one process afterwards). Each partition's
 * time starts at its own latest event, as acquire() does (partition-lead.ts): starting the
 * one store clock at the latest event of all partitions would expire a lease granted in a
 * slower partition's time early, and a second worker would take an entry still running.
 */
import assert from 'node:assert/strict';
import { describe, it, type TestContext } from 'node:test';
import { isRunlogError } from '../../src/errors.ts';
import { openFileLog } from '../../src/log/file/file-log.ts';
import { openRunQueue, openRunQueueOnLog } from '../../src/queue/open-run-queue.ts';
import type { RunlogWarning } from '../../src/warnings.ts';
import { FakeClock, submitOf } from '../contract/fixtures.ts';
import { HOUR, PARTITIONS, threadOn } from '../support/acquired-ahead.ts';
import { onCleanup, scratchDir } from '../support/cleanup.ts';

const LEASE_MS = 60_000;

/**
 * Partition 0 written by a node at the fake clock's time, with an entry leased to worker-1 for
 * a minute; then partition 1 by a node `aheadMs` ahead; then a queue owning all partitions
 * opens a second later by partition 0's clock.
 */
async function openedAfterClusterOf(t: TestContext, aheadMs: number) {
  const dir = await scratchDir(t, 'runlog-open-ahead-');
  const clock = new FakeClock();
  const slow = await openRunQueue({ log: { kind: 'file', dir }, partitions: PARTITIONS, clock: clock.read, ownership: 'assigned' });
  await slow.acquire(0);
  await slow.submit(submitOf('acme', threadOn(0)));
  const taken = await slow.take({ agents: ['build'], holder: 'worker-1', ttlMs: LEASE_MS });
  assert.equal(taken?.entry.thread, threadOn(0));
  await slow.stop();

  const ahead = new FakeClock(clock.nowMs + aheadMs);
  const fast = await openRunQueue({ log: { kind: 'file', dir }, clock: ahead.read, ownership: 'assigned' });
  await fast.acquire(1);
  await fast.submit({ ...submitOf('acme', threadOn(1)), agent: 'elsewhere' });
  await fast.stop();

  clock.advance(1_000);
  const warnings: RunlogWarning[] = [];
  const queue = await openRunQueueOnLog(await openFileLog({ dir }), { clock: clock.read, onWarning: (w) => warnings.push(w) });
  onCleanup(t, () => queue.stop());
  return { queue, clock, taken: taken!, warnings, aheadAt: ahead.nowMs };
}

describe("opening a queue with ownership 'all' on partitions stamped by clocks apart", () => {
  for (const aheadMs of [0, HOUR]) {
    it(`leaves a lease on the slower partition its real length (other partition ${aheadMs / HOUR} h ahead)`, async (t) => {
      const { queue, clock, taken } = await openedAfterClusterOf(t, aheadMs);
      const second = await queue.take({ agents: ['build'], holder: 'worker-2', ttlMs: LEASE_MS });
      assert.equal(second?.entry.entryId, undefined, `worker-2 took ${second?.entry.entryId}, leased to worker-1 a second ago`);
      const extended = await queue.extend(taken.lease, LEASE_MS).catch((error: unknown) => error);
      assert.ok(!isRunlogError(extended), `worker-1's lease, granted a second ago, is gone: ${String(extended)}`);
      clock.advance(LEASE_MS - 1_000);
      assert.equal(
        await queue.take({ agents: ['build'], holder: 'worker-2', ttlMs: LEASE_MS }),
        null,
        'taken before the extended lease ran out',
      );
      clock.advance(2_000);
      const again = await queue.take({ agents: ['build'], holder: 'worker-2', ttlMs: LEASE_MS });
      assert.equal(again?.entry.entryId, taken.entry.entryId, 'the lease did not run out after its real length');
    });
  }

  it('starts the faster partition at its own latest event, and says so naming it', async (t) => {
    const { queue, aheadAt, warnings } = await openedAfterClusterOf(t, HOUR);
    const leads = warnings.filter((w) => w.code === 'RUNLOG_CLOCK_STEP');
    assert.equal(leads.length, 1, JSON.stringify(leads));
    assert.match(leads[0]!.message, /partition 1's latest event is \d+ ms ahead/);
    const ticket = await queue.submit({ ...submitOf('acme', threadOn(1, 1)), agent: 'here' });
    assert.ok((await queue.entry('acme', ticket.entryId)).submittedAt >= aheadAt, 'a time on partition 1 went back');
    const other = await queue.submit({ ...submitOf('acme', threadOn(0, 1)), agent: 'here' });
    assert.ok((await queue.entry('acme', other.entryId)).submittedAt < aheadAt, "partition 0's time jumped to partition 1's");
  });
});
