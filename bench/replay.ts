/**
 * Replay speed: a log of `lifecycles` x 4 events, written fast (big batches straight to
 * the log), then a cold start (openRunQueue replays every partition) timed in events/s,
 * beside the raw rates of the same bytes: reading the records only, and decodeEvent over
 * the record values only (read beforehand, not timed). Each phase's CPU per event
 * (process.cpuUsage, which a loaded machine disturbs less than wall time) says where a
 * replay's time goes: reading as the replay reads (the file log's records visited where they
 * lie, else a frame's records at a time, values as views), decoding, and the rest, the fold.
 *
 * On the file log the decode alone and the cold start are timed in turn ROUNDS times (the
 * snapshots a cold start leaves removed before the next), and each figure is the median of
 * its rounds, the ratio the median of the rounds' ratios: timed once each, the decode alone
 * ranged 1.3-2.3M events/s over a day at the same code (2026-12-07), and the ratio with it.
 */
import { readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { decodeEvent } from '../src/events/codec.ts';
import { batchesOf, type AppendRecord, type BatchedRecords, type EventLog, type LogRecord } from '../src/log/event-log.ts';
import { openLog } from '../src/log/open-log.ts';
import { partitionOf } from '../src/log/partitioner.ts';
import { openRunQueue, openRunQueueOnLog } from '../src/queue/open-run-queue.ts';
import type { LogSite } from './logs.ts';
import { median } from './median.ts';
import { profiled } from './profile.ts';
import { INPUT, PARTITIONS, TENANT, benchEntryId, lifecycleEvents, recordsOf } from './throughput.ts';

const THREADS = 1000;
/** Records a frame of the replay's log holds by default: big batches, the fastest log to read. */
export const FRAME_RECORDS = 8192;
/**
 * Rounds of decode alone, then cold start (file log; other logs keep what a cold start leaves: one
 * round). Five, not three: a round's ratio ranged 0.53-0.89 within one run (2026-12-07, 13:10), and
 * the median of five moves less with one slow phase than the median of three.
 */
const ROUNDS = 5;

export interface Replay {
  events: number;
  /** Each Submitted's input, in bytes. */
  inputBytes: number;
  /** Records a frame of the log holds (one append each). */
  frameRecords: number;
  buildSeconds: number;
  coldStartSeconds: number;
  /** Opening the log alone (after a clean close: the file log reads no frame but each active segment's last). */
  openSeconds: number;
  /** Opening the file log as after a crash (its active segments scanned whole, every frame CRC-checked); null on other logs. */
  crashOpenSeconds: number | null;
  /** The median over rounds (ROUNDS), as are the decode rate and the CPU figures. */
  replayPerSecond: number;
  readPerSecond: number;
  decodePerSecond: number;
  /** The median of the rounds' replay ÷ decode, each round's two timed one after the other. */
  replayToDecode: number;
  /** Each round's replay and decode rates, events/s. */
  rounds: { replayPerSecond: number; decodePerSecond: number }[];
  entries: number;
  /** CPU µs per event: the cold start (open and replay), reading as the replay reads, and decoding. */
  cpu: { coldStart: number; read: number; decode: number };
}

/** CPU µs spent in `body` per event. */
async function cpuPerEvent(events: number, body: () => Promise<unknown>): Promise<number> {
  const started = process.cpuUsage();
  await body();
  const { user, system } = process.cpuUsage(started);
  return (user + system) / events;
}

/**
 * Writes `lifecycles` closed entries on THREADS threads, `frameRecords` records an append (a
 * frame) per partition, each with `input`. A log a service writes through the queue has small
 * frames (one per group commit: ~10 records with 64 callers on 8 partitions, 1 on a quiet queue);
 * frames of FRAME_RECORDS are written in parallel, smaller ones one after the other.
 */
async function buildLog(log: EventLog, lifecycles: number, input: Uint8Array, frameRecords: number): Promise<number> {
  const seqs = new Array<number>(PARTITIONS).fill(0);
  const batches: AppendRecord[][] = Array.from({ length: PARTITIONS }, () => []);
  const at = Date.now() - lifecycles;
  let events = 0;
  const flush = async (p: number, min: number): Promise<void> => {
    const batch = batches[p]!;
    let from = 0;
    for (; batch.length - from >= Math.max(min, 1); from += frameRecords) await log.append(p, batch.slice(from, from + frameRecords));
    batches[p] = batch.slice(from);
  };
  for (let i = 0; i < lifecycles; i++) {
    const thread = `replay-${i % THREADS}`;
    const p = partitionOf(TENANT, thread, PARTITIONS);
    const seq = ++seqs[p]!;
    const records = recordsOf(lifecycleEvents(TENANT, thread, benchEntryId(p, seq), seq, at + i, `run-${i}`, input));
    batches[p]!.push(...records);
    events += records.length;
    if (batches[p]!.length >= frameRecords) await flush(p, frameRecords);
  }
  await Promise.all(batches.map((_, p) => flush(p, 0)));
  return events;
}

export async function replaySpeed(
  site: LogSite,
  lifecycles: number,
  input: Uint8Array = INPUT,
  frameRecords = FRAME_RECORDS,
): Promise<Replay> {
  const buildStarted = performance.now();
  // Small frames are written without fsync (one append at a time, each synced, would take minutes); the replay reads them as any.
  const buildConfig = frameRecords < FRAME_RECORDS && site.config.kind === 'file' ? { ...site.config, fsync: false } : site.config;
  const log = await openLog(buildConfig, PARTITIONS);
  const events = await buildLog(log, lifecycles, input, frameRecords);
  const buildSeconds = (performance.now() - buildStarted) / 1000;
  const persistent = site.config.kind !== 'memory';
  if (persistent) await log.close();

  const crashOpenSeconds = site.config.kind === 'file' ? await openAsAfterACrash(site.config.dir) : null;
  const values: Uint8Array[] = [];
  const openStarted = performance.now();
  const raw = persistent ? await openLog(site.config, PARTITIONS) : log;
  const openSeconds = (performance.now() - openStarted) / 1000;
  const readStarted = performance.now();
  for (let p = 0; p < PARTITIONS; p++) for await (const record of raw.read(p, 0n)) if (record.value !== null) values.push(record.value);
  viewsOfOneBuffer(values);
  const readSeconds = (performance.now() - readStarted) / 1000;
  let batched = 0;
  const readCpu = await cpuPerEvent(events, async () => {
    for (let p = 0; p < PARTITIONS; p++) {
      const records = raw.read(p, 0n) as AsyncIterable<LogRecord> & Partial<BatchedRecords>;
      // As catchUp reads: records where they lie when the log offers it (the file log), else a batch at a time.
      if (records.visit !== undefined) batched += await records.visit(() => {});
      else for await (const batch of batchesOf(records)) batched += batch.length;
    }
  });
  if (batched !== events) throw new Error(`read ${batched} records a batch at a time, expected ${events}`);
  if (persistent) await raw.close();

  const rounds: Round[] = [];
  let entries = 0;
  for (let round = 0; round < (site.config.kind === 'file' ? ROUNDS : 1); round++) {
    if (site.config.kind === 'file') await rm(join(site.config.dir, 'snapshots'), { recursive: true, force: true });
    const decode = await timed(events, async () => {
      for (const value of values) decodeEvent(value);
    });
    let queue: Awaited<ReturnType<typeof openRunQueue>> | undefined;
    const coldStart = await timed(events, async () => {
      queue = await profiled(round === 0 ? 'replay' : `replay-${round + 1}`, () =>
        persistent ? openRunQueue({ log: site.config, partitions: PARTITIONS }) : openRunQueueOnLog(log),
      );
    });
    entries = queue!.views().reduce((sum, view) => sum + view.entries.size + view.closed.size, 0);
    await queue!.stop();
    if (entries !== lifecycles) throw new Error(`replay found ${entries} entries, expected ${lifecycles}`);
    rounds.push({ decode, coldStart });
  }
  values.length = 0;
  const coldStartSeconds = median(rounds.map((round) => round.coldStart.seconds));
  const decodeSeconds = median(rounds.map((round) => round.decode.seconds));
  return {
    events,
    inputBytes: input.byteLength,
    frameRecords,
    buildSeconds,
    coldStartSeconds,
    openSeconds,
    crashOpenSeconds,
    replayPerSecond: events / coldStartSeconds,
    readPerSecond: events / readSeconds,
    decodePerSecond: events / decodeSeconds,
    replayToDecode: median(rounds.map((round) => round.decode.seconds / round.coldStart.seconds)),
    rounds: rounds.map((round) => ({ replayPerSecond: events / round.coldStart.seconds, decodePerSecond: events / round.decode.seconds })),
    entries,
    cpu: {
      coldStart: median(rounds.map((round) => round.coldStart.cpuPerEvent)),
      read: readCpu,
      decode: median(rounds.map((round) => round.decode.cpuPerEvent)),
    },
  };
}

interface Timing {
  seconds: number;
  cpuPerEvent: number;
}

interface Round {
  decode: Timing;
  coldStart: Timing;
}

/** `body`'s wall seconds and CPU µs per event. */
async function timed(events: number, body: () => Promise<unknown>): Promise<Timing> {
  collectGarbage();
  const started = performance.now();
  const cpu = await cpuPerEvent(events, body);
  return { seconds: (performance.now() - started) / 1000, cpuPerEvent: cpu };
}

/**
 * Times an open of the file log in `dir` as it is after a crash: the reached records keep their
 * end but lose what a clean close adds (src/log/file/recovery.ts: CLEAN CLOSE), so every active
 * segment is scanned. Closing it again records the clean close back.
 */
async function openAsAfterACrash(dir: string): Promise<number> {
  for (const name of (await readdir(dir)).filter((file) => /^reached-\d+\.json$/.test(file))) {
    const record = JSON.parse(await readFile(join(dir, name), 'utf8')) as Record<string, unknown>;
    delete record['clean'];
    await writeFile(join(dir, name), JSON.stringify(record));
  }
  const started = performance.now();
  const log = await openLog({ kind: 'file', dir, fsync: true }, PARTITIONS);
  const seconds = (performance.now() - started) / 1000;
  await log.close();
  return seconds;
}

/**
 * A full collection before each timed phase (node --expose-gc, as `npm run bench` runs), so that
 * none is timed collecting what an earlier phase left (the last round's stopped queue): a real
 * cold start begins with a fresh heap.
 */
function collectGarbage(): void {
  (globalThis as { gc?: () => void }).gc?.();
}

/**
 * Makes each value a view of one buffer holding them all (the same bytes, still a Uint8Array each,
 * so decode alone runs as before). Read as copies, each value had a backing store of its own: a
 * million of them, live through every cold start timed after, and each full collection there
 * swept them all: a cold start holding them took 0.8-0.9 s CPU with runs of 1.8-2.2 s, against
 * 0.77-0.95 s with views of one buffer and no such run (1M events, 2026-12-07).
 */
function viewsOfOneBuffer(values: Uint8Array[]): void {
  const bytes = new Uint8Array(values.reduce((sum, value) => sum + value.length, 0));
  for (let i = 0, at = 0; i < values.length; i++) {
    bytes.set(values[i]!, at);
    values[i] = bytes.subarray(at, (at += values[i]!.length));
  }
}
