/**
 * A queue that acquired a partition stamped by a node whose clock ran ahead (src/queue/partition-lead.ts):
 * partition 0 of a 2-partition file log gets one entry (agent 'elsewhere', on threadOn(0)) from a
 * node `aheadMs` ahead (an hour unless said; 0 for the control), then a queue with ownership
 * 'assigned' and a fake clock that is not ahead acquires partitions 1 and 0.
 */
import type { TestContext } from 'node:test';
import { openFileLog } from '../../src/log/file/file-log.ts';
import { partitionOf } from '../../src/log/partitioner.ts';
import { openRunQueue, openRunQueueOnLog } from '../../src/queue/open-run-queue.ts';
import type { RunQueue } from '../../src/queue/run-queue.ts';
import type { RunlogWarning } from '../../src/warnings.ts';
import { FakeClock, submitOf } from '../contract/fixtures.ts';
import { onCleanup, scratchDir } from './cleanup.ts';

export const PARTITIONS = 2;
export const HOUR = 3_600_000;

/** A thread of tenant acme on `partition`; `nth` > 0 for another one (a thread runs its entries one at a time). */
export function threadOn(partition: number, nth = 0): string {
  for (let i = 0, found = 0; ; i++) if (partitionOf('acme', `t${i}`, PARTITIONS) === partition && found++ === nth) return `t${i}`;
}

/** `beforeAcquire` runs once partition 1 serves and before partition 0 is acquired (no time passes on the queue's clock). */
export async function acquiredAhead<T = undefined>(t: TestContext, aheadMs = HOUR, beforeAcquire?: (queue: RunQueue) => Promise<T>) {
  const dir = await scratchDir(t, 'runlog-acquired-ahead-');
  const ahead = new FakeClock(1_700_000_000_000 + aheadMs);
  const other = await openRunQueue({ log: { kind: 'file', dir }, partitions: PARTITIONS, clock: ahead.read });
  await other.submit({ ...submitOf('acme', threadOn(0)), agent: 'elsewhere' });
  await other.stop();

  const clock = new FakeClock();
  const warnings: RunlogWarning[] = [];
  const log = await openFileLog({ dir, partitions: PARTITIONS });
  const queue = await openRunQueueOnLog(log, { clock: clock.read, ownership: 'assigned', onWarning: (w) => warnings.push(w) });
  onCleanup(t, () => queue.stop());
  await queue.acquire(1);
  const before = (await beforeAcquire?.(queue)) as T;
  await queue.acquire(0);
  return { dir, queue, clock, warnings, aheadAt: ahead.nowMs, before };
}
