/**
 * Snapshots under a load that never pauses, on a real file log (fsync on). 64 callers, each
 * running lifecycles back to back on its own thread, keep a group in flight nearly all the
 * time, and a snapshot waits for a moment with nothing in flight (snapshot-keeper.ts): the
 * moment after a group's commands settle and before its callers' next ones are decided. So
 * snapshots must keep being taken as often as the policy asks: here at least a third of one per
 * `everyRecords` records (each lifecycle writes 4). (A group commit that split the callers
 * into two cohorts, each deciding while the other's fsync ran, left no such moment: 1 snapshot
 * in 10,241 records; it was tried and dropped, see the README's Benchmarks.) Both ways of
 * leasing: take then startAttempt, and takeStarted.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { openFileLog } from '../../src/log/file/file-log.ts';
import { openRunQueueOnLog } from '../../src/queue/open-run-queue.ts';
import type { Lease, RunQueueApi } from '../../src/queue/types.ts';
import { onCleanup, scratchDir } from '../support/cleanup.ts';

const CALLERS = 64;
const LIFECYCLES_PER_CALLER = 40;
const EVERY_RECORDS = 1_000;

type Leasing = (queue: RunQueueApi, holder: string) => Promise<Lease>;

const takeThenStart: Leasing = async (queue, holder) => {
  for (;;) {
    const taken = await queue.take({ agents: ['build'], holder, ttlMs: 60_000 });
    if (taken !== null) {
      await queue.startAttempt(taken.lease, `${holder}-${taken.lease.entryId}`);
      return taken.lease;
    }
    await new Promise((resolve) => setImmediate(resolve)); // another caller holds this thread's head: let it close
  }
};

const takeStarted: Leasing = async (queue, holder) => {
  for (;;) {
    const [started] = await queue.takeStarted({ agents: ['build'], holder, ttlMs: 60_000 });
    if (started !== undefined) return started.lease;
    await new Promise((resolve) => setImmediate(resolve));
  }
};

async function snapshotsUnderLoad(t: Parameters<typeof scratchDir>[0], lease: Leasing): Promise<{ saves: number; records: number }> {
  const dir = await scratchDir(t, 'runlog-snapshot-under-load-');
  const log = await openFileLog({ dir, partitions: 1 });
  onCleanup(t, () => log.close());
  const store = log.snapshots!;
  const save = store.save.bind(store);
  let saves = 0;
  (store as { save: typeof save }).save = (partition, bytes, nextOffset) => {
    saves++;
    return save(partition, bytes, nextOffset);
  };
  const queue = await openRunQueueOnLog(log, { snapshots: { everyRecords: EVERY_RECORDS, everyMs: 3_600_000 } });
  onCleanup(t, () => queue.stop());
  await Promise.all(
    Array.from({ length: CALLERS }, async (_, caller) => {
      const holder = `caller-${caller}`;
      for (let n = 0; n < LIFECYCLES_PER_CALLER; n++) {
        await queue.submit({ tenant: 'acme', thread: `thread-${caller}`, agent: 'build', input: 'x' });
        await queue.close(await lease(queue, holder), { status: 'succeeded' });
      }
    }),
  );
  const during = saves; // before the stop's own snapshot
  return { saves: during, records: Number(await log.endOffset(0)) };
}

describe('snapshots under a load that never pauses', () => {
  for (const [name, lease] of [
    ['take then startAttempt', takeThenStart],
    ['takeStarted', takeStarted],
  ] as const) {
    it(`64 callers in lock step (${name}): snapshots are taken while they run`, async (t) => {
      const { saves, records } = await snapshotsUnderLoad(t, lease);
      assert.ok(records >= CALLERS * LIFECYCLES_PER_CALLER * 4, `${records} records`);
      const asked = Math.floor(records / EVERY_RECORDS);
      assert.ok(
        saves >= asked / 3,
        `${saves} snapshots while ${records} records were appended (everyRecords ${EVERY_RECORDS}: ${asked} asked for)`,
      );
    });
  }
});
