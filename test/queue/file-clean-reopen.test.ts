/**
 * A RunQueue on the file log stopped cleanly and opened again: its log's active segments are
 * opened unread (src/log/file/recovery.ts: CLEAN CLOSE), so the replay reads their frames for
 * the first time, from 0 (no snapshot) or from a snapshot's offset inside them, and every closed
 * entry is read back from them by its offsets. The reopened queue answers the same views,
 * entries and tickets as before the stop, and a replay equals its live views.
 */
import assert from 'node:assert/strict';
import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import { openRunQueue } from '../../src/queue/open-run-queue.ts';
import type { RunQueue } from '../../src/queue/run-queue.ts';
import type { RunQueueOptions } from '../../src/queue/types.ts';
import { FakeClock, assertReplayEqualsLive, submitOf } from '../contract/fixtures.ts';
import { cleanOf, opensUnread, readRecord } from '../log/clean-close.ts';
import { onCleanup, scratchDir } from '../support/cleanup.ts';
import { snapshotView } from '../support/snapshot-view.ts';

const PARTITIONS = 2;

/** Lifecycles of every kind over 240 entries: closed (succeeded, failed), cancelled, running, leased, waiting. */
async function workload(queue: RunQueue, clock: FakeClock): Promise<Array<{ tenant: string; entryId: string }>> {
  const tickets: Array<{ tenant: string; entryId: string }> = [];
  for (let i = 0; i < 240; i++) {
    const tenant = `tenant-${i % 5}`;
    const ticket = await queue.submit(submitOf(tenant, `thread-${i % 40}`, { input: `work ${i} `.padEnd(60 + (i % 7) * 50, '.') }));
    tickets.push({ tenant, entryId: ticket.entryId });
    if (i % 9 === 3) await queue.cancel(tenant, ticket.entryId, `cancelled ${i}`);
    clock.advance(10);
  }
  for (let i = 0; i < 150; i++) {
    const taken = await queue.take({ agents: ['build'], holder: `worker-${i % 4}`, ttlMs: 600_000 });
    if (taken === null) break;
    if (i % 5 === 4) continue; // leased, not started
    await queue.startAttempt(taken.lease, `run-${i}`);
    if (i % 5 === 3) continue; // running
    await queue.close(
      taken.lease,
      i % 5 === 2 ? { status: 'failed', error: `failed ${i}` } : { status: 'succeeded', result: `result ${i}` },
    );
    clock.advance(5);
  }
  return tickets;
}

async function answers(queue: RunQueue, tickets: ReadonlyArray<{ tenant: string; entryId: string }>): Promise<unknown[]> {
  return Promise.all(tickets.map(({ tenant, entryId }) => queue.entry(tenant, entryId)));
}

/**
 * Removes each partition's newest snapshot (the stop's), so that the reopen starts from the one
 * before, taken in the middle of the log; answers the offsets the replays start from.
 */
async function dropStopSnapshots(dir: string): Promise<bigint[]> {
  const starts: bigint[] = [];
  for (let p = 0; p < PARTITIONS; p++) {
    const snapshots = join(dir, 'snapshots', `partition-${p}`);
    const names = (await readdir(snapshots)).filter((name) => name.endsWith('.snapshot')).sort();
    assert.ok(names.length === 2, `two snapshots kept in ${snapshots}: ${names.join()}`);
    await rm(join(snapshots, names[1]!));
    starts.push(BigInt(names[0]!.slice(0, 20)));
  }
  return starts;
}

async function reopenedSame(t: TestContext, options: Omit<RunQueueOptions, 'log' | 'clock'>, fromMiddle = false): Promise<void> {
  const dir = await scratchDir(t, 'runlog-clean-queue-');
  const clock = new FakeClock();
  const open = () =>
    openRunQueue({ log: { kind: 'file', dir }, partitions: PARTITIONS, clock: clock.read, onWarning: () => {}, ...options });
  const queue = await open();
  const tickets = await workload(queue, clock);
  const views = queue.views().map(snapshotView);
  const entries = await answers(queue, tickets);
  const ends = await Promise.all(queue.views().map((view) => queue.log.endOffset(view.partition)));
  await queue.stop();

  for (let p = 0; p < PARTITIONS; p++) assert.ok(cleanOf(await readRecord(dir, p)), `partition ${p}'s stop recorded a clean close`);
  if (fromMiddle) {
    const starts = await dropStopSnapshots(dir);
    starts.forEach((start, p) =>
      assert.ok(start > 0n && start < ends[p]!, `partition ${p}'s replay starts at ${start}, inside its log (end ${ends[p]})`),
    );
  }
  assert.equal(await opensUnread(t, dir, false), true, 'the reopen reads no frame of the active segment but the last');
  const again = await open();
  onCleanup(t, () => again.stop());
  assert.deepEqual(again.views().map(snapshotView), views);
  assert.deepEqual(await answers(again, tickets), entries);
  await assertReplayEqualsLive(again);
}

describe('a RunQueue on the file log, stopped cleanly and reopened', () => {
  it('without snapshots (the replay reads the unread segments from 0), every closed entry read back from the log', async (t) => {
    await reopenedSame(t, { snapshots: false, closedCacheBytes: 0 });
  });

  it('from snapshots taken inside the unread segments (the replay learns their index from there)', async (t) => {
    await reopenedSame(t, { snapshots: { everyRecords: 97 }, closedCacheBytes: 0 }, true);
  });
});
