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
 *   after the other: entries/s.
 */
import { type RunQueue } from '../src/queue/run-queue.ts';
import { openRunQueue } from '../src/queue/open-run-queue.ts';
import type { SubmitRequest } from '../src/queue/types.ts';
import { Worker } from '../src/worker/worker.ts';
import type { LogSite } from './logs.ts';
import { generate } from './open-loop.ts';
import { profiled } from './profile.ts';
import { AGENT, concurrently, INPUT, TENANT, type Rate } from './throughput.ts';
import type { Row } from './rows.ts';

const CONCURRENCY = 64;
const PRODUCERS = 64;

export interface WorkerFigures {
  drain: Rate;
  closedLoop: Rate;
}

export interface WorkerLatency {
  perSecond: number;
  samples: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
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
    const submittedAt = new Map<number, number>();
    const latencies: number[] = [];
    let measuring = false;
    const worker = quietWorker(queue, (input) => {
      const at = submittedAt.get(Number(Buffer.from(input).toString()));
      if (measuring && at !== undefined) latencies.push(performance.now() - at);
    });
    return running(worker, async () => {
      const load = { tenant: TENANT, agent: AGENT, perSecond, clock: () => performance.now() };
      await generate(queue, { ...load, threadPrefix: 'warm-', durationMs: warmupMs }, new Map());
      measuring = true;
      await generate(queue, { ...load, threadPrefix: 'lat-', durationMs }, submittedAt);
      await worker.waitIdle();
      latencies.sort((a, b) => a - b);
      const at = (q: number): number => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? NaN;
      return { perSecond, samples: latencies.length, p50Ms: at(0.5), p99Ms: at(0.99), maxMs: latencies[latencies.length - 1] ?? NaN };
    });
  });
}

/** submitBatch in chunks of `chunk` (inputs of 100 bytes, 16 threads) for `durationMs`: entries/s. */
export async function batchSubmitRate(site: LogSite, chunk: number, durationMs: number, warmupMs: number): Promise<Rate> {
  return withQueue(site, async (queue) => {
    const input = new Uint8Array(100).fill(120);
    let n = 0;
    const batch = (): SubmitRequest[] =>
      Array.from({ length: chunk }, () => ({ tenant: TENANT, thread: `batch-${n++ % 16}`, agent: AGENT, input }));
    const run = async (ms: number): Promise<Rate> => {
      const rate = await concurrently(1, ms, async () => void (await queue.submitBatch(batch())));
      return { ...rate, count: rate.count * chunk, perSecond: rate.perSecond * chunk };
    };
    await run(warmupMs);
    return profiled('batch-submit', () => run(durationMs));
  });
}

const TARGET_P99_MS = 10;
const TARGET_BATCH = 100_000;

export function workerRows(figures: WorkerFigures | undefined, latency: WorkerLatency | undefined, batch: Rate | undefined): Row[] {
  const rate = (r: Rate): string => `${Math.round(r.perSecond).toLocaleString('en-US')}/s`;
  const rows: Row[] = [];
  if (figures !== undefined) {
    rows.push(
      {
        name: 'Worker drain (64 producers, then concurrency 64)',
        value: rate(figures.drain),
        target: '2x BullMQ (bench:peers)',
        verdict: '',
      },
      { name: 'Worker closed-loop lifecycles (64 callers)', value: rate(figures.closedLoop), target: '', verdict: '' },
    );
  }
  if (latency !== undefined) {
    rows.push({
      name: `Worker submit-to-handler p99 at ${latency.perSecond}/s`,
      value: `${latency.p99Ms.toFixed(1)} ms`,
      target: `< ${TARGET_P99_MS} ms`,
      verdict: latency.p99Ms < TARGET_P99_MS ? 'ok' : 'MISS',
      note: `p50 ${latency.p50Ms.toFixed(2)} ms, max ${latency.maxMs.toFixed(1)} ms over ${latency.samples} entries (half the closed-loop rate)`,
    });
  }
  if (batch !== undefined) {
    rows.push({
      name: 'batch submit (chunks of 1,000)',
      value: `${Math.round(batch.perSecond).toLocaleString('en-US')} entries/s`,
      target: `>= ${TARGET_BATCH.toLocaleString('en-US')}/s`,
      verdict: batch.perSecond >= TARGET_BATCH ? 'ok' : 'MISS',
    });
  }
  return rows;
}
