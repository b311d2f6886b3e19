/**
 * The Worker's figures (issue 12): its processing rate and submit-to-handler-start latency,
 * and the batch submit.
 *
 * - drain: `count` entries submitted by 64 producers (single submits, each on a thread of its
 *   own), then a Worker at concurrency 64 with a no-op handler runs them all: entries/s from
 *   its start to the last close.
 * - closed loop: 64 callers each submit on a thread of their own and await its close, while a
 *   Worker at concurrency 64 runs them: lifecycles/s.
 * - latency: an open-loop generator submits at `perSecond` (half the closed-loop rate), each
 *   entry on a thread of its own; the handler notes when it starts: p50/p99 from submit to start.
 * - batch submit: chunks of 1,000 entries (inputs of 100 bytes, 16 threads), one submitBatch
 *   after the other (one caller), and by 4 callers at once: entries/s, each beside the raw
 *   ceiling measured in the same run (the same records appended straight to the log in
 *   chunks of 1,000 by as many callers), with the CPU per entry of each.
 */
import os from 'node:os';
import { PerformanceObserver, monitorEventLoopDelay } from 'node:perf_hooks';
import { type RunQueue } from '../src/queue/run-queue.ts';
import { openRunQueue } from '../src/queue/open-run-queue.ts';
import type { SubmitRequest } from '../src/queue/types.ts';
import { Worker } from '../src/worker/worker.ts';
import type { LogSite } from './logs.ts';
import { SubmitTimes, generate } from './open-loop.ts';
import { profiled } from './profile.ts';
import { openLog } from '../src/log/open-log.ts';
import { encodeSnapshot, encodeSnapshotState } from '../src/events/snapshot-codec.ts';
import type { PartitionView } from '../projections/partition-view.ts';
import { viewStateToWrite } from '../projections/view-snapshot.ts';
import type { LatencyFloor } from './latency-floor.ts';
import { AGENT, benchEntryId, concurrently, INPUT, lifecycleEvents, recordsOf, TENANT, type Rate } from './throughput.ts';
import type { Row } from './rows.ts';
import { startGcAccount, type GcAccount } from './gc-account.ts';

const CONCURRENCY = 64;
const PRODUCERS = 64;

export interface WorkerFigures {
  drain: Rate;
  closedLoop: Rate;
  /** The load average after each measurement. */
  drainLoad: string;
  closedLoopLoad: string;
}

export interface WorkerLatency {
  perSecond: number;
  samples: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** The load average after the measurement. */
  load: string;
  /** What can make the tail, over the measured window: the event loop's delay and the garbage collector's pauses. */
  tail: TailCauses;
  /** The log alone at the same rate, measured after it: two appends one after the other (latency-floor.ts). */
  floor?: LatencyFloor;
  floorLoad?: string;
}

async function withQueue<T>(site: LogSite, body: (queue: RunQueue) => Promise<T>): Promise<T> {
  const queue = await openRunQueue({ log: site.config, partitions: site.partitions });
  try {
    return await body(queue);
  } finally {
    await queue.stop();
  }
}

/** Runs `worker` until `body` resolves, then stops it. */
async function running<T>(worker: Worker, body: () => Promise<T>): Promise<T> {
  const stop = new AbortController();
  const run = worker.run(stop.signal);
  try {
    return await body();
  } finally {
    stop.abort();
    await run;
  }
}

function quietWorker(queue: RunQueue, onStart: (input: Uint8Array) => void = () => {}): Worker {
  const worker = new Worker(queue, { concurrency: CONCURRENCY, logger: () => {} });
  worker.handle(AGENT, ({ input }) => onStart(input));
  return worker;
}

/** Enqueue `count` by 64 producers, then drain with a Worker: its entries/s. */
export async function workerDrainRate(site: LogSite, count: number): Promise<Rate> {
  return withQueue(site, async (queue) => {
    let next = 0;
    await Promise.all(
      Array.from({ length: PRODUCERS }, async () => {
        for (let n = next++; n < count; n = next++)
          await queue.submit({ tenant: TENANT, thread: `drain-${n}`, agent: AGENT, input: INPUT });
      }),
    );
    let closed = 0;
    let started = 0;
    let done!: () => void;
    const finished = new Promise<void>((resolve) => (done = resolve));
    const worker = new Worker(queue, {
      concurrency: CONCURRENCY,
      logger: () => {},
      onEvent: (event) => {
        if (event.type === 'succeeded' && ++closed === count) done();
      },
    });
    worker.handle(AGENT, () => {});
    return running(worker, () =>
      profiled('worker-drain', async () => {
        started = performance.now();
        await finished;
        const seconds = (performance.now() - started) / 1000;
        return { count, seconds, perSecond: count / seconds };
      }),
    );
  });
}

/** 64 callers, each submitting and awaiting its close, a Worker running them: lifecycles/s. */
export async function workerClosedLoopRate(site: LogSite, durationMs: number, warmupMs: number): Promise<Rate> {
  return withQueue(site, async (queue) => {
    const worker = quietWorker(queue);
    const loop = async (caller: number, n: number): Promise<void> => {
      const ticket = await queue.submit({ tenant: TENANT, thread: `loop-${caller}-${n}`, agent: AGENT, input: INPUT });
      await queue.awaitClosed(TENANT, ticket.entryId);
    };
    return running(worker, async () => {
      await concurrently(PRODUCERS, warmupMs, (caller, n) => loop(caller, n));
      return profiled('worker-closed-loop', () => concurrently(PRODUCERS, durationMs, (caller, n) => loop(caller, n + 1_000_000_000)));
    });
  });
}

/** Submit-to-handler-start at `perSecond` (open loop), through a Worker at concurrency 64. */
export async function workerLatency(site: LogSite, perSecond: number, durationMs: number, warmupMs: number): Promise<WorkerLatency> {
  return withQueue(site, async (queue) => {
    const submittedAt = new SubmitTimes((perSecond * durationMs * 1.1) / 1000);
    const latencies: number[] = [];
    let measuring = false;
    const worker = quietWorker(queue, (input) => {
      const at = submittedAt.get(Number(Buffer.from(input).toString()));
      if (measuring && at !== undefined) latencies.push(performance.now() - at);
    });
    return running(worker, async () => {
      const load = { tenant: TENANT, agent: AGENT, perSecond, clock: () => performance.now() };
      await generate(queue, { ...load, threadPrefix: 'warm-', durationMs: warmupMs }, new SubmitTimes((perSecond * warmupMs * 1.1) / 1000));
      measuring = true;
      const watch = watchTail();
      await profiled('worker-latency', async () => {
        await generate(queue, { ...load, threadPrefix: 'lat-', durationMs }, submittedAt);
        await worker.waitIdle();
      });
      const tail = watch.stop();
      latencies.sort((a, b) => a - b);
      const at = (q: number): number => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? NaN;
      const maxMs = latencies[latencies.length - 1] ?? NaN;
      return { perSecond, samples: latencies.length, p50Ms: at(0.5), p99Ms: at(0.99), maxMs, load: loadNow(), tail };
    });
  });
}

const BATCH_INPUT = new Uint8Array(100).fill(120);
const BATCH_THREADS = 16;

/** This process's CPU time (user + system) over `body`, per item counted in its Rate, in µs. */
async function withCpu(body: () => Promise<Rate>): Promise<Rate> {
  const before = process.cpuUsage();
  const rate = await body();
  const used = process.cpuUsage(before);
  return { ...rate, cpuUsPerItem: (used.user + used.system) / rate.count };
}

/** Runs `body` (one chunk of `chunk` items) on `callers` concurrent callers for `ms`: items/s and CPU per item. */
async function chunked(callers: number, chunk: number, ms: number, body: () => Promise<void>): Promise<Rate> {
  return withCpu(async () => {
    const rate = await concurrently(callers, ms, body);
    return { ...rate, count: rate.count * chunk, perSecond: rate.perSecond * chunk };
  });
}

/**
 * submitBatch in chunks of `chunk` (inputs of 100 bytes, 16 threads) by `callers` concurrent
 * callers for `durationMs`: entries/s.
 */
export async function batchSubmitRate(
  site: LogSite,
  chunk: number,
  callers: number,
  durationMs: number,
  warmupMs: number,
): Promise<{ rate: Rate; snapshot: SnapshotCost }> {
  return withQueue(site, async (queue) => {
    let n = 0;
    const batch = (): SubmitRequest[] =>
      Array.from({ length: chunk }, () => ({ tenant: TENANT, thread: `batch-${n++ % BATCH_THREADS}`, agent: AGENT, input: BATCH_INPUT }));
    const run = (ms: number): Promise<Rate> => chunked(callers, chunk, ms, async () => void (await queue.submitBatch(batch())));
    await run(warmupMs);
    const rate = await profiled(`batch-submit-${callers}`, () => run(durationMs));
    return { rate, snapshot: snapshotCost(queue.views()[0]!) };
  });
}

/**
 * What taking a snapshot of the backlog costs in CPU, encoded here in one turn (state and envelope encoded, checksummed;
 * not saved). The queue writes the same open entries across turns (projections/open-threads-writing.ts): the CPU is the same.
 */
export interface SnapshotCost {
  open: number;
  bytes: number;
  cpuUsPerOpen: number;
  wallMs: number;
}

/** The snapshot the queue would take of `view` now, encoded as saveSnapshot does in its turn (src/projector/snapshots.ts), timed. */
function snapshotCost(view: PartitionView): SnapshotCost {
  const open = view.entries.size;
  const before = process.cpuUsage();
  const started = performance.now();
  const state = encodeSnapshotState(viewStateToWrite(view));
  const bytes = encodeSnapshot({ logId: 'bench', partition: view.partition, nextOffset: view.nextOffset, takenAt: Date.now(), state });
  const wallMs = performance.now() - started;
  const used = process.cpuUsage(before);
  return { open, bytes: bytes.byteLength, cpuUsPerOpen: (used.user + used.system) / Math.max(open, 1), wallMs };
}

/**
 * The raw ceiling of the batch submit: the same records (the Submitted events a batch of
 * `chunk` writes, encoded once) appended straight to the log, `chunk` records per append,
 * by `callers` concurrent callers: entries/s of the log's write and datasync alone.
 */
export async function batchRawRate(site: LogSite, chunk: number, callers: number, durationMs: number, warmupMs: number): Promise<Rate> {
  const log = await openLog(site.config, site.partitions);
  try {
    const submitted = Array.from({ length: chunk }, (_, i) => {
      const thread = `batch-${i % BATCH_THREADS}`;
      return lifecycleEvents(TENANT, thread, benchEntryId(0, i + 1), i + 1, Date.now(), '', BATCH_INPUT)[0]!;
    });
    const records = recordsOf(submitted);
    const run = (ms: number): Promise<Rate> => chunked(callers, chunk, ms, async () => void (await log.append(0, records)));
    await run(warmupMs);
    return await run(durationMs);
  } finally {
    await log.close();
  }
}

const TARGET_P99_MS = 10;
const TARGET_BATCH = 100_000;

/** The load average now (1, 5, 15 min): printed beside each figure, since the machine is shared. */
export function loadNow(): string {
  return os
    .loadavg()
    .map((n) => n.toFixed(2))
    .join(' ');
}

/** A batch figure: the batch submit and its raw ceiling, by the same number of callers in the same run. */
export interface BatchFigure {
  callers: number;
  submit: Rate;
  /** A snapshot of the backlog the submit left, taken after it (not in its figure: the policy decides how often one is due). */
  snapshot: SnapshotCost;
  raw: Rate;
  /** The load average after each measurement. */
  submitLoad: string;
  rawLoad: string;
}

/** Measures the batch submit, then its raw ceiling, for `callers` callers (one site each). */
export async function batchFigure(
  on: <T>(name: string, body: (site: LogSite) => Promise<T>) => Promise<T>,
  callers: number,
  durationMs: number,
  warmupMs: number,
): Promise<BatchFigure> {
  const { rate: submit, snapshot } = await on(`batch-${callers}`, (site) => batchSubmitRate(site, 1_000, callers, durationMs, warmupMs));
  const submitLoad = loadNow();
  const raw = await on(`batch-raw-${callers}`, (site) => batchRawRate(site, 1_000, callers, durationMs, warmupMs));
  return { callers, submit, snapshot, raw, submitLoad, rawLoad: loadNow() };
}

function snapshotNote({ open, bytes, cpuUsPerOpen, wallMs }: SnapshotCost): string {
  const mib = (bytes / 2 ** 20).toFixed(1);
  return `A snapshot of the backlog left (${open.toLocaleString('en-US')} open entries, ${mib} MiB), encoded in one turn: ${cpuUsPerOpen.toFixed(2)} µs CPU per open entry, ${wallMs.toFixed(0)} ms`;
}

/** The event loop's delay (p99, max) and the garbage collector's pauses (count, longest, total) over a window. */
export interface TailCauses {
  loopP99Ms: number;
  loopMaxMs: number;
  gcCount: number;
  gcMaxMs: number;
  gcTotalMs: number;
  /** Pauses of 2 ms or more. */
  gcLong: number;
  /** The collector's own account: what the scavenges promoted, and the full collections (gc-account.ts). */
  gc: GcAccount;
}

/** Watches the event loop's delay and the GC's pauses until stop(). */
function watchTail(): { stop(): TailCauses } {
  const loop = monitorEventLoopDelay({ resolution: 1 });
  const pauses: number[] = [];
  const gc = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) pauses.push(entry.duration);
  });
  gc.observe({ entryTypes: ['gc'] });
  loop.enable();
  const account = startGcAccount();
  return {
    stop() {
      loop.disable();
      gc.disconnect();
      return {
        gc: account.stop(),
        loopP99Ms: loop.percentile(99) / 1e6,
        loopMaxMs: loop.max / 1e6,
        gcCount: pauses.length,
        gcMaxMs: Math.max(0, ...pauses),
        gcTotalMs: pauses.reduce((sum, ms) => sum + ms, 0),
        gcLong: pauses.filter((ms) => ms >= 2).length,
      };
    },
  };
}

function tailNote({ tail }: WorkerLatency): string {
  const { loopP99Ms, loopMaxMs, gcCount, gcMaxMs, gcTotalMs, gcLong, gc } = tail;
  const promotedKb = gc.scavenges === 0 ? 0 : gc.promoted / gc.scavenges / 1024;
  return (
    `. Over the window: event-loop delay p99 ${loopP99Ms.toFixed(1)} ms, max ${loopMaxMs.toFixed(1)} ms; GC ${gcCount} pauses, longest ${gcMaxMs.toFixed(1)} ms, ${gcLong} of 2 ms or more, ${gcTotalMs.toFixed(0)} ms in all; ` +
    `${gc.scavenges} scavenges promoting ${promotedKb.toFixed(0)} KB each, ${gc.fullCollections} full collections`
  );
}

function floorNote({ floor, floorLoad }: WorkerLatency): string {
  if (floor === undefined) return '';
  return `. Floor in the same run (the log alone at that rate: a submission's append, then a lease-and-attempt append, one after the other): p50 ${floor.p50Ms.toFixed(2)} ms, p99 ${floor.p99Ms.toFixed(1)} ms over ${floor.samples}; load ${floorLoad}`;
}

export function workerRows(
  figures: WorkerFigures | undefined,
  latency: WorkerLatency | undefined,
  batches: readonly BatchFigure[] = [],
): Row[] {
  const rate = (r: Rate): string => `${Math.round(r.perSecond).toLocaleString('en-US')}/s`;
  const rows: Row[] = [];
  if (figures !== undefined) {
    rows.push(
      {
        name: 'Worker drain (64 producers, then concurrency 64)',
        value: rate(figures.drain),
        target: '2x BullMQ (bench:peers)',
        verdict: '',
        note: `load ${figures.drainLoad}`,
      },
      {
        name: 'Worker closed-loop lifecycles (64 callers)',
        value: rate(figures.closedLoop),
        target: '',
        verdict: '',
        note: `load ${figures.closedLoopLoad}`,
      },
    );
  }
  if (latency !== undefined) {
    rows.push({
      name: `Worker submit-to-handler p99 at ${latency.perSecond}/s`,
      value: `${latency.p99Ms.toFixed(1)} ms`,
      target: `< ${TARGET_P99_MS} ms`,
      verdict: latency.p99Ms < TARGET_P99_MS ? 'ok' : 'MISS',
      note: `p50 ${latency.p50Ms.toFixed(2)} ms, max ${latency.maxMs.toFixed(1)} ms over ${latency.samples} entries (half the closed-loop rate); load ${latency.load}${tailNote(latency)}${floorNote(latency)}`,
    });
  }
  for (const { callers, submit, snapshot, raw, submitLoad, rawLoad } of batches) {
    const us = (r: Rate): string => (r.cpuUsPerItem === undefined ? '?' : `${r.cpuUsPerItem.toFixed(1)} µs`);
    rows.push({
      name: `batch submit (chunks of 1,000, ${callers} caller${callers === 1 ? '' : 's'})`,
      value: `${Math.round(submit.perSecond).toLocaleString('en-US')} entries/s`,
      target: `>= ${TARGET_BATCH.toLocaleString('en-US')}/s`,
      verdict: submit.perSecond >= TARGET_BATCH ? 'ok' : 'MISS',
      note: `load ${submitLoad}; CPU ${us(submit)} per entry. Raw ceiling in the same run (the same records appended straight to the log, 1,000 per append, ${callers} caller${callers === 1 ? '' : 's'}): ${Math.round(raw.perSecond).toLocaleString('en-US')} entries/s, CPU ${us(raw)} per entry, load ${rawLoad}. ${snapshotNote(snapshot)}`,
    });
  }
  return rows;
}
