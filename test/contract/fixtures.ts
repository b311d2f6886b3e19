/**
 * Shared helpers for RunQueue suites: a fake store clock, a queue on a fresh log, log inspection.
 *
 * A backend supplies a log, and optionally a transport: what the suite calls (`queue`, the
 * RunQueueApi under test) is then not the RunQueue itself but something in front of it (the
 * HTTP client and a server). Tests call `queue`; what only the process holding the queue can
 * see (its views for replay, sweep, expireOverdue, the log's size) they read from `local`.
 */
import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import { isRunlogError, type ErrorCode } from '../../src/errors.ts';
import { decodeEvent } from '../../src/events/codec.ts';
import type { RunlogEvent } from '../../src/events/types.ts';
import type { EventLog } from '../../src/log/event-log.ts';
import { type RunQueue } from '../../src/queue/run-queue.ts';
import { openRunQueueOnLog } from '../../src/queue/open-run-queue.ts';
import type { Capacity, RunQueueApi } from '../../src/queue/types.ts';
import { replayPartition } from '../../src/projector/replay.ts';
import { snapshotView } from '../support/snapshot-view.ts';
import { onCleanup } from '../support/cleanup.ts';

export type OpenLog = (partitions: number, t: TestContext) => Promise<EventLog>;

/** What a transport put in front of a RunQueue: the API the suite calls, and how to take it down (not the queue). */
export interface Transported {
  queue: RunQueueApi;
  /** Stops what the transport started (a client, a server); closing again does nothing. */
  close(): Promise<void>;
}

/** Puts something in front of a running RunQueue whose store clock is `clock` (the client and a server, say). */
export type Transport = (local: RunQueue, clock: FakeClock) => Promise<Transported>;

/** The suite calls the RunQueue itself. */
export const inProcess: Transport = async (local) => ({ queue: local, close: async () => {} });

/** A backend of the RunQueue and Worker suites. */
export interface Backend {
  openLog: OpenLog;
  /** In process unless given. */
  transport?: Transport;
  /**
   * Whether commands called in the same turn are decided in call order (true in process).
   * Over HTTP they are not: concurrent requests reach the server in any order, so the
   * same-tick races and multi-command model ticks do not apply there.
   */
  sameTick?: boolean;
  /** The queue's closedCacheBytes (its default unless given; 0: every closed entry is read back from the log). */
  closedCacheBytes?: number;
}

export class FakeClock {
  constructor(public nowMs = 1_700_000_000_000) {}
  readonly read = (): number => this.nowMs;
  advance(ms: number): void {
    this.nowMs += ms;
  }
}

export interface QueueFixture {
  /** The API under test: the RunQueue itself in process, or the transport in front of it. */
  queue: RunQueueApi;
  /** The RunQueue in this process, for what only its process sees (views, sweep, expireOverdue). */
  local: RunQueue;
  log: EventLog;
  clock: FakeClock;
  /** Takes the transport down, then stops the queue (also done after the test). */
  stop(): Promise<void>;
}

export interface QueueFixtureOptions {
  partitions?: number;
  capacity?: Capacity;
  maxInputBytes?: number;
  /** Runs on the fresh log before the queue opens on it (to write events by hand). */
  prepare?: (log: EventLog, clock: FakeClock) => Promise<void>;
}

export async function queueOn(backend: Backend, t: TestContext, options: QueueFixtureOptions = {}): Promise<QueueFixture> {
  const log = await backend.openLog(options.partitions ?? 4, t);
  let stop = async (): Promise<void> => {};
  // Cleanups run last-registered first: the queue (and its log) stops before openLog's own cleanup removes the files.
  onCleanup(t, () => stop());
  const clock = new FakeClock();
  await options.prepare?.(log, clock);
  const local = await openRunQueueOnLog(log, {
    clock: clock.read,
    capacity: options.capacity ?? {},
    ...(options.maxInputBytes ? { maxInputBytes: options.maxInputBytes } : {}),
    ...(backend.closedCacheBytes === undefined ? {} : { closedCacheBytes: backend.closedCacheBytes }),
  });
  stop = () => local.stop();
  const transported = await (backend.transport ?? inProcess)(local, clock);
  stop = async () => {
    try {
      await transported.close();
    } finally {
      await local.stop();
    }
  };
  return { queue: transported.queue, local, log, clock, stop: () => stop() };
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
