/**
 * Memory per retained closed entry (issue 12: at most 64 B of RSS at 10M closed + 100k open,
 * inputs of 100 B). Two file logs are written fast, straight to the log in big batches (as a
 * compacted log holds a closed entry: its Submitted, AttemptStarted and Closed records): one
 * with only the `open` entries, one with the same open entries and `closed` closed ones. A
 * queue is opened (replayed) on each in turn; RSS, heap and ArrayBuffers are read after forced
 * GCs before and after each open. Per closed entry = (delta of the big one - delta of the
 * open-only one) / closed: the open entries and the fixed costs cancel out.
 */
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { AppendRecord, EventLog } from '../src/log/event-log.ts';
import { openLog } from '../src/log/open-log.ts';
import { partitionOf } from '../src/log/partitioner.ts';
import type { RunlogEvent } from '../src/events/types.ts';
import { openRunQueue } from '../src/queue/open-run-queue.ts';
import type { LogSite } from './logs.ts';
import { settledMemory } from './memory.ts';
import { submittedEvent } from './submitted-event.ts';
import { AGENT, PARTITIONS, TENANT, benchEntryId, recordsOf } from './throughput.ts';

const INPUT = Buffer.alloc(100, 'x');
const CLOSED_THREADS = 1_000;
const PER_OPEN_THREAD = 10;
const BATCH_RECORDS = 8192;

export interface MemoryPerClosedEntry {
  closed: number;
  open: number;
  inputBytes: number;
  rssPerClosed: number;
  heapPerClosed: number;
  arrayBuffersPerClosed: number;
  /** RSS per open entry beyond its input, from the open-only log. */
  rssPerOpen: number;
  buildSeconds: number;
  /** Opening (replaying) the big log. */
  openSeconds: number;
  gcForced: boolean;
}

/** Writes `closed` closed entries then `open` open ones, spread over PARTITIONS partitions by thread. */
async function buildLog(log: EventLog, closed: number, open: number): Promise<void> {
  const seqs = new Array<number>(PARTITIONS).fill(0);
  const batches: AppendRecord[][] = Array.from({ length: PARTITIONS }, () => []);
  const at = Date.now() - closed - open;
  const flush = async (min: number): Promise<void> => {
    await Promise.all(
      batches.map((batch, p) => {
        if (batch.length === 0 || batch.length < min) return null;
        batches[p] = [];
        return log.append(p, batch);
      }),
    );
  };
  const add = async (thread: string, events: (entryId: string, seq: number) => RunlogEvent[]): Promise<void> => {
    const p = partitionOf(TENANT, thread, PARTITIONS);
    const seq = ++seqs[p]!;
    batches[p]!.push(...recordsOf(events(benchEntryId(p, seq), seq)));
    if (batches[p]!.length >= BATCH_RECORDS) await flush(BATCH_RECORDS);
  };
  for (let i = 0; i < closed; i++) {
    const thread = `closed-${i % CLOSED_THREADS}`;
    await add(thread, (entryId, seq) => closedEntryEvents(thread, entryId, seq, at + i, `run-${i}`));
  }
  for (let i = 0; i < open; i++) {
    const thread = `open-${Math.floor(i / PER_OPEN_THREAD)}`;
    await add(thread, (entryId, seq) => [submitted(thread, entryId, seq, at + closed + i)]);
  }
  await flush(0);
}

function submitted(thread: string, entryId: string, seq: number, at: number): RunlogEvent {
  return submittedEvent({ tenant: TENANT, thread, entryId, seq, at }, { agent: AGENT, input: INPUT });
}

/** What a compacted log keeps of an entry that ran once and succeeded. */
function closedEntryEvents(thread: string, entryId: string, seq: number, at: number, runId: string): RunlogEvent[] {
  const ids = { tenant: TENANT, thread, entryId };
  return [
    submitted(thread, entryId, seq, at),
    { type: 'AttemptStarted', ...ids, at, runId, attempt: 1, epoch: 1 },
    { type: 'Closed', ...ids, at, outcome: 'succeeded', result: null, error: null, deferredAttempts: 0 },
  ];
}

/** A queue opened on `site`: memory before and after, and how long opening took; the counts checked. */
async function openedDelta(site: LogSite, closed: number, open: number): Promise<{ memory: Delta; seconds: number }> {
  const before = await settledMemory();
  const started = performance.now();
  const queue = await openRunQueue({ log: site.config, partitions: PARTITIONS });
  const seconds = (performance.now() - started) / 1000;
  try {
    const after = await settledMemory();
    const views = queue.views();
    const [foundClosed, foundOpen] = [views.reduce((n, v) => n + v.closed.size, 0), views.reduce((n, v) => n + v.openCount, 0)];
    if (foundClosed !== closed || foundOpen !== open) throw new Error(`found ${foundClosed} closed and ${foundOpen} open entries`);
    return { memory: delta(before, after), seconds };
  } finally {
    await queue.stop();
  }
}

interface Delta {
  rss: number;
  heapUsed: number;
  arrayBuffers: number;
}

function delta(before: NodeJS.MemoryUsage, after: NodeJS.MemoryUsage): Delta {
  return {
    rss: after.rss - before.rss,
    heapUsed: after.heapUsed - before.heapUsed,
    arrayBuffers: after.arrayBuffers - before.arrayBuffers,
  };
}

/**
 * `openOnly` and `big`: two fresh file-log sites; with `reuse`, a log an earlier run built in a
 * site's directory (its bench-built.json says its size) is opened again instead of built.
 */
export async function memoryPerClosedEntry(
  openOnly: LogSite,
  big: LogSite,
  closed: number,
  open: number,
  reuse = false,
): Promise<MemoryPerClosedEntry> {
  const buildStarted = performance.now();
  let reused = true;
  for (const [site, count] of [
    [openOnly, 0],
    [big, closed],
  ] as const) {
    const dir = site.config.kind === 'file' ? site.config.dir : null;
    const size = JSON.stringify({ closed: count, open });
    if (reuse && dir !== null && (await readFile(join(dir, 'bench-built.json'), 'utf8').catch(() => null)) === size) continue;
    reused = false;
    if (reuse && dir !== null) await rm(dir, { recursive: true, force: true });
    const log = await openLog({ ...site.config, ...(site.config.kind === 'file' ? { fsync: false } : {}) }, PARTITIONS);
    try {
      await buildLog(log, count, open);
    } finally {
      await log.close();
    }
    if (reuse && dir !== null) await writeFile(join(dir, 'bench-built.json'), size);
  }
  const buildSeconds = reused ? 0 : (performance.now() - buildStarted) / 1000;
  const small = await openedDelta(openOnly, 0, open);
  const large = await openedDelta(big, closed, open);
  return {
    closed,
    open,
    inputBytes: INPUT.length,
    rssPerClosed: (large.memory.rss - small.memory.rss) / closed,
    heapPerClosed: (large.memory.heapUsed - small.memory.heapUsed) / closed,
    arrayBuffersPerClosed: (large.memory.arrayBuffers - small.memory.arrayBuffers) / closed,
    rssPerOpen: small.memory.rss / open - INPUT.length,
    buildSeconds,
    openSeconds: large.seconds,
    gcForced: typeof (globalThis as { gc?: unknown }).gc === 'function',
  };
}
