/**
 * The soak's checker: what the events topic, the submitter's acknowledgements and the
 * handlers' own records say about a run. Each count but the totals must be 0.
 *
 *   lost                 acknowledged tickets with no Submitted event in the topic
 *   duplicateSubmits     a key (e<n>) submitted as more than one entry (each entry's key is unique in a run)
 *   notClosed            acknowledged entries with no Closed event
 *   closedTwice          entries with more than one Closed event
 *   eventOverlaps        per thread, in log order: an AttemptStarted while another attempt of the
 *                        thread is open. An attempt is open from its AttemptStarted to its entry's
 *                        Yielded or Closed, or to a new Leased of its entry (its lease expired and
 *                        the entry was taken again: the queue's view of the attempt ended there)
 *   handlerOverlaps      per thread, by the handlers' own start and end times (one clock on the
 *                        machine): a run that started before an earlier run of the thread ended
 *   startsOffHead        an AttemptStarted for an entry that is not its thread's oldest open entry
 *   submitOrderBroken    a thread's Submitted events out of the submitter's order
 *   handlerOrderBroken   per thread, by start time, a run of an entry submitted before the previous run's
 *   runsWithoutAttempt   handler runs (entry, attempt) with no AttemptStarted of that attempt
 *
 * A thread's events are all in one partition, so log order within a partition is the order
 * its single writer decided them in. The topic is compacted only in closed segments, far
 * larger than a soak writes, so every event is still there to read.
 */
import { decodeEvent } from '../../src/events/codec.ts';
import type { RunlogEvent } from '../../src/events/types.ts';
import { openKafkaLog } from '../../src/log/kafka/kafka-log.ts';
import type { Acknowledged } from './submitter.ts';
import type { HandlerRun } from './worker-child.ts';

export interface SoakCounts {
  acknowledged: number;
  submittedEvents: number;
  attempts: number;
  retried: number;
  leaseExpiries: number;
  succeeded: number;
  parked: number;
  handlerRuns: number;
  handlerFailures: number;
  lost: number;
  duplicateSubmits: number;
  notClosed: number;
  closedTwice: number;
  eventOverlaps: number;
  handlerOverlaps: number;
  startsOffHead: number;
  submitOrderBroken: number;
  handlerOrderBroken: number;
  runsWithoutAttempt: number;
  /** Store-clock ms from the first Submitted to the last Closed. */
  spanMs: number;
}

const MAX_EXAMPLES = 20;

/** The counts that must be 0. */
export const MUST_BE_ZERO = [
  'lost',
  'duplicateSubmits',
  'notClosed',
  'closedTwice',
  'eventOverlaps',
  'handlerOverlaps',
  'startsOffHead',
  'submitOrderBroken',
  'handlerOrderBroken',
  'runsWithoutAttempt',
] as const satisfies readonly (keyof SoakCounts)[];

/** Every event of the topic, per partition in log order (read-only: fences no writer). */
export async function readEventsTopic(brokers: readonly string[], topic: string): Promise<RunlogEvent[][]> {
  const log = await openKafkaLog({ brokers: [...brokers], topic, readOnly: true, clientId: 'runlog-soak-check' });
  try {
    const partitions: RunlogEvent[][] = [];
    for (let p = 0; p < log.partitions; p++) {
      const events: RunlogEvent[] = [];
      for await (const record of log.read(p, 0n)) if (record.value !== null) events.push(decodeEvent(record.value));
      partitions.push(events);
    }
    return partitions;
  } finally {
    await log.close();
  }
}

interface ThreadState {
  open: { entryId: string; attempt: number } | null;
  /** Entries submitted and not closed, oldest first. */
  pending: string[];
  /** The run number (n of e<n>) of the thread's last Submitted. */
  lastSubmitted: number;
}

/** Checks a run; `examples` gets a line for each of the first faults found (at most MAX_EXAMPLES). */
export function check(
  partitions: readonly RunlogEvent[][],
  acknowledged: readonly Acknowledged[],
  runs: readonly HandlerRun[],
  examples: string[] = [],
): SoakCounts {
  const example = (line: () => string): void => {
    if (examples.length < MAX_EXAMPLES) examples.push(line());
  };
  const counts = emptyCounts(acknowledged.length, runs);
  const ackOf = new Map(acknowledged.map((ack) => [ack.entryId, ack]));
  const entryOfKey = new Map<string, string>();
  const submittedIds = new Set<string>();
  const closes = new Map<string, number>();
  const attempts = new Set<string>();
  let first = Infinity;
  let last = -Infinity;
  for (const events of partitions) {
    const threads = new Map<string, ThreadState>();
    for (const event of events) {
      const thread = threads.get(event.thread) ?? { open: null, pending: [], lastSubmitted: -1 };
      threads.set(event.thread, thread);
      if (event.type === 'Submitted') {
        counts.submittedEvents++;
        submittedIds.add(event.entryId);
        first = Math.min(first, event.at);
        const known = event.key === null ? undefined : entryOfKey.get(event.key);
        if (known !== undefined && known !== event.entryId) counts.duplicateSubmits++;
        if (event.key !== null) entryOfKey.set(event.key, event.entryId);
        const n = ackOf.get(event.entryId)?.n ?? Number(event.key?.slice(1));
        if (n <= thread.lastSubmitted) counts.submitOrderBroken++;
        thread.lastSubmitted = n;
        thread.pending.push(event.entryId);
      } else if (event.type === 'AttemptStarted') {
        counts.attempts++;
        attempts.add(`${event.entryId}/${event.attempt}`);
        const open = thread.open;
        if (open !== null) {
          counts.eventOverlaps++;
          example(
            () => `eventOverlaps: ${event.entryId} attempt ${event.attempt} started while ${open.entryId} attempt ${open.attempt} was open`,
          );
        }
        if (thread.pending[0] !== event.entryId) {
          counts.startsOffHead++;
          example(() => `startsOffHead: ${event.entryId} started while ${thread.pending[0]} was its thread's oldest open entry`);
        }
        thread.open = { entryId: event.entryId, attempt: event.attempt };
      } else if (event.type === 'Leased') {
        if (thread.open?.entryId === event.entryId) {
          counts.leaseExpiries++;
          thread.open = null;
        }
      } else if (event.type === 'Yielded') {
        if (event.kind === 'retry') counts.retried++;
        if (thread.open?.entryId === event.entryId) thread.open = null;
      } else if (event.type === 'Closed') {
        closes.set(event.entryId, (closes.get(event.entryId) ?? 0) + 1);
        last = Math.max(last, event.at);
        if (event.outcome === 'succeeded') counts.succeeded++;
        if (event.outcome === 'failed') counts.parked++;
        if (thread.open?.entryId === event.entryId) thread.open = null;
        thread.pending = thread.pending.filter((id) => id !== event.entryId);
      }
    }
  }
  for (const ack of acknowledged) {
    if (!submittedIds.has(ack.entryId)) counts.lost++;
    if (!closes.has(ack.entryId)) counts.notClosed++;
  }
  for (const n of closes.values()) if (n > 1) counts.closedTwice++;
  for (const [entryId, , attempt] of runs) if (!attempts.has(`${entryId}/${attempt}`)) counts.runsWithoutAttempt++;
  checkHandlerRuns(runs, ackOf, counts, example);
  counts.spanMs = Number.isFinite(first) && Number.isFinite(last) ? last - first : 0;
  return counts;
}

/** Overlaps and order by the handlers' own clock: each thread's runs by start time. */
function checkHandlerRuns(
  runs: readonly HandlerRun[],
  ackOf: ReadonlyMap<string, Acknowledged>,
  counts: SoakCounts,
  example: (line: () => string) => void,
): void {
  const byThread = new Map<string, HandlerRun[]>();
  for (const run of runs) {
    const list = byThread.get(run[1]) ?? [];
    list.push(run);
    byThread.set(run[1], list);
  }
  for (const list of byThread.values()) {
    list.sort((a, b) => a[3] - b[3]);
    let last: HandlerRun | undefined;
    let latest = -1;
    for (const run of list) {
      const [entryId, , , startedAt, ended] = run;
      const before = last;
      if (before !== undefined && startedAt < before[4]) {
        counts.handlerOverlaps++;
        example(() => `handlerOverlaps: ${describeRun(run)} started before ${describeRun(before)} ended`);
      }
      if (before === undefined || ended > before[4]) last = run;
      const n = ackOf.get(entryId)?.n;
      if (n === undefined) continue;
      if (n < latest) counts.handlerOrderBroken++;
      latest = Math.max(latest, n);
    }
  }
}

function describeRun([entryId, thread, attempt, startedAt, endedAt, failed, pid]: HandlerRun): string {
  const at = (ms: number): string => new Date(ms).toISOString().slice(11, 23);
  return `${thread} ${entryId} attempt ${attempt} (pid ${pid}, ${at(startedAt)}-${at(endedAt)}${failed ? ', failed' : ''})`;
}

function emptyCounts(acknowledged: number, runs: readonly HandlerRun[]): SoakCounts {
  return {
    acknowledged,
    submittedEvents: 0,
    attempts: 0,
    retried: 0,
    leaseExpiries: 0,
    succeeded: 0,
    parked: 0,
    handlerRuns: runs.length,
    handlerFailures: runs.filter((run) => run[5] === 1).length,
    lost: 0,
    duplicateSubmits: 0,
    notClosed: 0,
    closedTwice: 0,
    eventOverlaps: 0,
    handlerOverlaps: 0,
    startsOffHead: 0,
    submitOrderBroken: 0,
    handlerOrderBroken: 0,
    runsWithoutAttempt: 0,
    spanMs: 0,
  };
}
