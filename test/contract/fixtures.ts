/** Shared helpers for RunQueue suites: a fake store clock, a queue on a fresh log, log inspection. */
import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import { isRunlogError, type ErrorCode } from '../../src/errors.ts';
import { decodeEvent } from '../../src/events/codec.ts';
import type { RunlogEvent } from '../../src/events/types.ts';
import type { EventLog } from '../../src/log/event-log.ts';
import { type RunQueue } from '../../src/queue/run-queue.ts';
import { openRunQueueOnLog } from '../../src/queue/open-run-queue.ts';
import type { Capacity } from '../../src/queue/types.ts';
import { replayPartition } from '../../src/projector/replay.ts';
import { snapshotView } from '../support/snapshot-view.ts';
import { onCleanup } from '../support/cleanup.ts';

export type OpenLog = (partitions: number, t: TestContext) => Promise<EventLog>;

export class FakeClock {
  constructor(public nowMs = 1_700_000_000_000) {}
  readonly read = (): number => this.nowMs;
  advance(ms: number): void {
    this.nowMs += ms;
  }
}

export interface QueueFixture {
  queue: RunQueue;
  log: EventLog;
  clock: FakeClock;
}

export async function queueOn(
  openLog: OpenLog,
  t: TestContext,
  options: { partitions?: number; capacity?: Capacity; maxInputBytes?: number } = {},
): Promise<QueueFixture> {
  const log = await openLog(options.partitions ?? 4, t);
  let queue: RunQueue | undefined;
  // Cleanups run last-registered first: the queue (and its log) stops before openLog's own cleanup removes the files.
  onCleanup(t, () => queue?.stop());
  const clock = new FakeClock();
  queue = await openRunQueueOnLog(log, {
    clock: clock.read,
    capacity: options.capacity ?? {},
    ...(options.maxInputBytes ? { maxInputBytes: options.maxInputBytes } : {}),
  });
  return { queue, log, clock };
}

/** Every event (not tombstones) of every partition, in partition then offset order. */
export async function allEvents(log: EventLog): Promise<RunlogEvent[]> {
  const events: RunlogEvent[] = [];
  for (let p = 0; p < log.partitions; p++) {
    for await (const record of log.read(p, 0n)) if (record.value !== null) events.push(decodeEvent(record.value));
  }
  return events;
}

/** The sum of end offsets: grows whenever anything is written. */
export async function logSize(log: EventLog): Promise<bigint> {
  let total = 0n;
  for (let p = 0; p < log.partitions; p++) total += await log.endOffset(p);
  return total;
}

/** Runs `action`, expects a RunlogError with `code`, and checks nothing was written. */
export async function refused(log: EventLog, code: ErrorCode, action: () => Promise<unknown>): Promise<void> {
  const before = await logSize(log);
  await assert.rejects(action, (error: unknown) => {
    assert.ok(isRunlogError(error, code), `expected RunlogError ${code}, got ${String(error)}`);
    return true;
  });
  assert.equal(await logSize(log), before, `a refused ${code} command wrote to the log`);
}

/** Events appended while `action` ran. */
export async function eventsOf(log: EventLog, action: () => Promise<unknown>): Promise<RunlogEvent[]> {
  const ends: bigint[] = [];
  for (let p = 0; p < log.partitions; p++) ends.push(await log.endOffset(p));
  await action();
  const events: RunlogEvent[] = [];
  for (let p = 0; p < log.partitions; p++) {
    for await (const record of log.read(p, ends[p]!)) if (record.value !== null) events.push(decodeEvent(record.value));
  }
  return events.sort((a, b) => a.at - b.at);
}

/** Replays every partition of the queue's log into fresh views and compares with the live ones. */
export async function assertReplayEqualsLive(queue: RunQueue): Promise<void> {
  const live = queue.views().map(snapshotView);
  const replayed = await Promise.all(queue.views().map((view) => replayPartition(queue.log, view.partition)));
  assert.deepEqual(replayed.map(snapshotView), live);
}

export function submitOf(tenant: string, thread: string, extra: Record<string, unknown> = {}) {
  return { tenant, thread, agent: 'build', input: `work of ${thread}`, ...extra };
}
