/**
 * Throughput: full lifecycles per second through the RunQueue, and the raw append
 * ceiling of the same bytes straight to the log.
 *
 * Both run `callers` concurrent loops for `durationMs`. A lifecycle caller submits on its
 * own thread, takes, starts an attempt and closes (4 events, 4 durable appends). A raw
 * caller appends the 4 encoded records of one lifecycle, one append after the other, to its
 * thread's partition: the same bytes, the same durability wait, no queue.
 */
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import { encodeEvent } from '../src/events/codec.ts';
import { recordKeyOf } from '../src/events/keys.ts';
import type { RunlogEvent } from '../src/events/types.ts';
import type { AppendRecord } from '../src/log/event-log.ts';
import { openLog } from '../src/log/open-log.ts';
import { partitionOf } from '../src/log/partitioner.ts';
import { formatEntryId } from '../src/queue/entry-id.ts';
import { openRunQueue } from '../src/queue/open-run-queue.ts';
import type { Lease, RunQueueApi } from '../src/queue/types.ts';
import type { LogSite } from './logs.ts';
import { profiled } from './profile.ts';
import { submittedEvent } from './submitted-event.ts';

/** The partition count of the replay and memory benchmarks' logs. Lifecycle, raw and latency use --partitions (default 1). */
export const PARTITIONS = 8;
export const TENANT = 'bench';
export const AGENT = 'work';
export const INPUT = Buffer.from('{"job":"bench","n":42}');

export interface Rate {
  count: number;
  seconds: number;
  perSecond: number;
  /** The file log's fsyncs (group commits), or Kafka's transactions, and the records in them, in the timed window. */
  fsyncs?: number;
  transactions?: number;
  records?: number;
  /** This process's CPU time (user + system) per item counted, in µs, where measured. */
  cpuUsPerItem?: number;
  /** The load average (1, 5, 15 min) right after the measurement, where noted. */
  load?: string;
}

interface StatsLog {
  stats?: () => { fsyncs?: number; transactions?: number; records: number };
}

/** `body`'s rate, with the fsyncs (file log) or transactions (Kafka) and records the log counted meanwhile. */
async function withLogStats(log: StatsLog, body: () => Promise<Rate>): Promise<Rate> {
  const before = log.stats?.();
  const rate = await body();
  const after = log.stats?.();
  if (before === undefined || after === undefined) return rate;
  const counted = { ...rate, records: after.records - before.records };
  if (after.fsyncs !== undefined) counted.fsyncs = after.fsyncs - (before.fsyncs ?? 0);
  if (after.transactions !== undefined) counted.transactions = after.transactions - (before.transactions ?? 0);
  return counted;
}

/** Runs `loop` on `callers` concurrent callers until `durationMs` has passed; answers loops/s. */
export async function concurrently(callers: number, durationMs: number, loop: (caller: number, n: number) => Promise<void>): Promise<Rate> {
  let count = 0;
  const started = performance.now();
  const endAt = started + durationMs;
  await Promise.all(
    Array.from({ length: callers }, async (_, caller) => {
      for (let n = 0; performance.now() < endAt; n++) {
        await loop(caller, n);
        count++;
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  return { count, seconds, perSecond: count / seconds };
}

/**
 * How a lifecycle caller leases and starts: `takeStarted` leases the entry and starts its
 * attempt in one durable command (3 commands a lifecycle: submit, takeStarted, close, writing
 * the same 4 events), as the Worker does; `take` then `startAttempt` are two (4 commands).
 */
export type LifecycleShape = 'take-started' | 'take-then-start';

/** The durable commands one lifecycle of `shape` makes. */
export function commandsPerLifecycle(shape: LifecycleShape): number {
  return shape === 'take-started' ? 3 : 4;
}

/**
 * One caller's lifecycle: submit on its own thread, lease and start an attempt (as `shape`
 * says), close. The lease may find nothing: another caller may have taken this caller's
 * previous entry and not closed it yet, so the new one is not its thread's head. It then waits
 * for work (onWork) and tries again.
 */
export async function lifecycle(queue: RunQueueApi, caller: number, n: number, shape: LifecycleShape = 'take-then-start'): Promise<void> {
  const holder = `caller-${caller}`;
  await queue.submit({ tenant: TENANT, thread: `thread-${caller}`, agent: AGENT, input: INPUT });
  const lease = shape === 'take-started' ? await leaseStarted(queue, holder) : await leaseThenStart(queue, holder, n);
  await queue.close(lease, { status: 'succeeded' });
}

/** takeStarted: one command leases the entry and starts its attempt. */
async function leaseStarted(queue: RunQueueApi, holder: string): Promise<Lease> {
  const request = { agents: [AGENT], holder, ttlMs: 60_000 };
  let started = await queue.takeStarted(request);
  while (started.length === 0) {
    await nextWork(queue);
    started = await queue.takeStarted(request);
  }
  return started[0]!.lease;
}

/** take, then startAttempt: two commands. */
async function leaseThenStart(queue: RunQueueApi, holder: string, n: number): Promise<Lease> {
  const request = { agents: [AGENT], holder, ttlMs: 60_000 };
  let taken = await queue.take(request);
  while (taken === null) {
    await nextWork(queue);
    taken = await queue.take(request);
  }
  await queue.startAttempt(taken.lease, `${holder}-${n}`);
  return taken.lease;
}

/** Resolves at the next onWork call (or after 10 ms, a safety net). */
function nextWork(queue: RunQueueApi): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, 10);
    const unsubscribe = queue.onWork(done);
    function done(): void {
      clearTimeout(timer);
      unsubscribe();
      resolve();
    }
  });
}

export async function lifecycleRate(
  site: LogSite,
  callers: number,
  durationMs: number,
  warmupMs: number,
  shape: LifecycleShape = 'take-then-start',
): Promise<Rate> {
  const queue = await openRunQueue({ log: site.config, partitions: site.partitions });
  try {
    await concurrently(callers, warmupMs, (caller, n) => lifecycle(queue, caller, n, shape));
    const timed = async (): Promise<Rate> => {
      const before = process.cpuUsage();
      const rate = await concurrently(callers, durationMs, (caller, n) => lifecycle(queue, caller, n + 1_000_000_000, shape));
      const used = process.cpuUsage(before);
      const load = os
        .loadavg()
        .map((n) => n.toFixed(2))
        .join(' ');
      // The CPU per lifecycle (its commands: validate, decide, encode, fold, append), which the load disturbs less than the rate.
      return { ...rate, cpuUsPerItem: (used.user + used.system) / rate.count, load };
    };
    return await withLogStats(queue.log as StatsLog, () => profiled(`lifecycle-${shape}`, timed));
  } finally {
    await queue.stop();
  }
}

const BENCH_TICKET_SECRET = new Uint8Array(16).fill(7);

/** A ticket id shaped as the queue issues them (`<partition>-<token>`), so records weigh the same. */
export function benchEntryId(partition: number, seq: number): string {
  return formatEntryId(partition, seq, BENCH_TICKET_SECRET);
}

/** The four events a lifecycle writes, as the queue would write them. */
export function lifecycleEvents(
  tenant: string,
  thread: string,
  entryId: string,
  seq: number,
  at: number,
  runId: string,
  input: Uint8Array = INPUT,
): RunlogEvent[] {
  const ids = { tenant, thread, entryId };
  return [
    submittedEvent({ ...ids, at, seq }, { agent: AGENT, input }),
    { type: 'Leased', ...ids, at, holder: 'caller', epoch: 1, expiresAt: at + 60_000, deferredAttempts: 0 },
    { type: 'AttemptStarted', ...ids, at, runId, attempt: 1, epoch: 1 },
    { type: 'Closed', ...ids, at, outcome: 'succeeded', result: null, error: null, deferredAttempts: 0 },
  ];
}

export function recordsOf(events: readonly RunlogEvent[]): AppendRecord[] {
  return events.map((event) => ({ key: recordKeyOf(event), value: encodeEvent(event) }));
}

/** Raw appends: each caller appends its lifecycle's 4 records one by one; answers records/s. */
export async function rawAppendRate(site: LogSite, callers: number, durationMs: number, warmupMs: number): Promise<Rate> {
  const log = await openLog(site.config, site.partitions); // the partition count a queue would get
  try {
    const plans = Array.from({ length: callers }, (_, caller) => {
      const thread = `thread-${caller}`;
      const partition = partitionOf(TENANT, thread, log.partitions);
      const records = recordsOf(lifecycleEvents(TENANT, thread, benchEntryId(partition, caller + 1), caller + 1, Date.now(), randomUUID()));
      return { partition, records };
    });
    const loop = async (caller: number): Promise<void> => {
      const { partition, records } = plans[caller]!;
      for (const record of records) await log.append(partition, [record]);
    };
    await concurrently(callers, warmupMs, loop);
    const rate = await withLogStats(log as StatsLog, () => profiled('raw', () => concurrently(callers, durationMs, loop)));
    const records = rate.count * 4;
    return { ...rate, count: records, perSecond: records / rate.seconds };
  } finally {
    await log.close();
  }
}
