/**
 * A batch (closeBatch, takeStarted, submitBatch) stays in flight until the view has learnt its
 * records' offsets: a snapshot taken between its append's answer and that settle would meet
 * closes whose records the view cannot place yet, and fail (RUNLOG_SNAPSHOT_FAILED, seen under
 * bench:peers). Here single commands and batches finish together, with a snapshot due after
 * every record, on a real file log.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { openFileLog } from '../../src/log/file/file-log.ts';
import { openRunQueueOnLog } from '../../src/queue/open-run-queue.ts';
import type { RunlogWarning } from '../../src/warnings.ts';
import { FakeClock } from '../contract/fixtures.ts';
import { scratchDir } from '../support/cleanup.ts';

const ROUNDS = 5;
const PER_ROUND = 20;

test('no snapshot fails while batches and single commands finish together', async (t) => {
  const dir = await scratchDir(t, 'snapshot-batch-settle');
  const clock = new FakeClock();
  const warnings: RunlogWarning[] = [];
  const log = await openFileLog({ dir, fsync: false });
  const queue = await openRunQueueOnLog(log, { clock: clock.read, onWarning: (w) => warnings.push(w), snapshots: { everyRecords: 1 } });
  t.after(() => queue.stop());
  const submission = (i: number) => ({ tenant: 'acme', thread: `t${i}`, agent: 'build', input: `in ${i}` });
  let closed = 0;
  for (let round = 0; round < ROUNDS; round++) {
    for (let i = 0; i < PER_ROUND; i++) await queue.submit(submission(round * 1_000 + i));
    const leases = [];
    for (let i = 0; i < PER_ROUND; i++) {
      const taken = await queue.take({ agents: ['build'], holder: 'w', ttlMs: 60_000 });
      assert.ok(taken !== null);
      await queue.startAttempt(taken.lease, `run-${round}-${i}`);
      leases.push(taken.lease);
    }
    // Two batches and single commands in the same group: the first batch to settle snapshots (one is due) while
    // the second has not learnt its offsets yet.
    const closes = leases.map((lease) => ({ lease, request: { status: 'succeeded' as const, result: 'ok' } }));
    const batches = await Promise.all([
      queue.closeBatch(closes.slice(0, PER_ROUND / 4)),
      queue.closeBatch(closes.slice(PER_ROUND / 4, PER_ROUND / 2)),
      ...closes.slice(PER_ROUND / 2).map(({ lease, request }) => queue.close(lease, request)),
    ]);
    for (const answers of batches.slice(0, 2) as Awaited<ReturnType<typeof queue.closeBatch>>[]) {
      assert.deepEqual(
        answers.filter((answer) => 'error' in answer),
        [],
      );
    }
    closed += PER_ROUND;
  }
  assert.equal(closed, ROUNDS * PER_ROUND);
  // A stop while a batch's append is in flight: its last snapshot waits for the batch to settle.
  const submitted = queue.submitBatch(Array.from({ length: 50 }, (_, i) => submission(9_000 + i)));
  const taken = queue.takeStarted({ agents: ['build'], holder: 'w', ttlMs: 60_000, max: 8 });
  await queue.stop();
  await Promise.allSettled([submitted, taken]);
  const failed = warnings.filter((w) => w.code === 'RUNLOG_SNAPSHOT_FAILED');
  assert.deepEqual(failed, [], `snapshots failed: ${failed.map((w) => w.message).join('; ')}`);
});
