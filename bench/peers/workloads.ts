/**
 * The two workloads, the same on every system:
 * (a) enqueue then drain: `jobs` single adds from `producers` concurrent producers, then a
 *     worker at `concurrency` with a no-op handler until every job is completed (the drain's
 *     clock starts before the worker is started, so its start-up counts);
 * (b) closed loop: a worker at `concurrency`, and `callers` callers each adding a job and
 *     waiting for its completion, again and again, for a warm-up then a timed window.
 */
import { concurrently } from '../throughput.ts';
import type { PeerSystem } from './system.ts';

export interface EnqueueDrain {
  enqueuePerSecond: number;
  drainPerSecond: number;
  /** jobs ÷ (enqueue time + drain time). */
  overallPerSecond: number;
}

export interface Shape {
  jobs: number;
  producers: number;
  concurrency: number;
  callers: number;
  windowMs: number;
  warmupMs: number;
}

export async function enqueueThenDrain(system: PeerSystem, shape: Shape): Promise<EnqueueDrain> {
  const queue = await system.open();
  try {
    let next = 0;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: shape.producers }, async () => {
        while (next < shape.jobs) await queue.add(next++);
      }),
    );
    const enqueued = performance.now();
    await drain(shape.jobs, (completed) => queue.startWorker(shape.concurrency, completed));
    const drained = performance.now();
    const perSecond = (ms: number): number => shape.jobs / (ms / 1000);
    return {
      enqueuePerSecond: perSecond(enqueued - started),
      drainPerSecond: perSecond(drained - enqueued),
      overallPerSecond: perSecond(drained - started),
    };
  } finally {
    await queue.close();
  }
}

/** Resolves when `start`'s worker has completed `jobs` jobs; fails if it stalls (no completion for 60 s). */
function drain(jobs: number, start: (completed: () => void) => Promise<void>): Promise<void> {
  return new Promise((resolve, reject) => {
    let done = 0;
    const stalled = (): NodeJS.Timeout => setTimeout(() => reject(new Error(`drain stalled at ${done} of ${jobs} jobs`)), 60_000);
    let timer = stalled();
    const completed = (): void => {
      clearTimeout(timer);
      if (++done >= jobs) resolve();
      else timer = stalled();
    };
    start(completed).catch((error: unknown) => {
      clearTimeout(timer);
      reject(error);
    });
  });
}

/** Closed-loop full lifecycles per second. */
export async function closedLoop(system: PeerSystem, shape: Shape): Promise<number> {
  const queue = await system.open();
  try {
    await queue.startWorker(shape.concurrency, () => {});
    let n = 0;
    const lifecycle = (): Promise<void> => within(60_000, queue.addAndWait(n++));
    await concurrently(shape.callers, shape.warmupMs, lifecycle);
    return (await concurrently(shape.callers, shape.windowMs, lifecycle)).perSecond;
  } finally {
    await queue.close();
  }
}

function within<T>(ms: number, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>(
    (_, reject) => (timer = setTimeout(() => reject(new Error(`a job not completed after ${ms} ms`)), ms)),
  );
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}
