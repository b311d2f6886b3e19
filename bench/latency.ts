/**
 * Submit-to-take latency under a fixed load: an open-loop generator submits `perSecond`
 * entries (each on a thread of its own, so each is a head at once), and `takers` workers
 * take (waiting via queue.onWork when there is nothing), start an attempt and close.
 * Latency: from the submit call to the take that leases the entry answering.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { type RunQueue } from '../src/queue/run-queue.ts';
import { openRunQueue } from '../src/queue/open-run-queue.ts';
import type { LogSite } from './logs.ts';
import { profiled } from './profile.ts';
import { AGENT, TENANT } from './throughput.ts';
import { SubmitTimes, generate } from './open-loop.ts';

export interface Latency {
  offeredPerSecond: number;
  achievedPerSecond: number;
  samples: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** Event-loop delay over the run (GC pauses and long tasks show here). */
  loopDelayP99Ms: number;
  loopDelayMaxMs: number;
}

/** Wakes one idle taker per onWork call; a wake with nobody idle is kept for the next one. */
class Wakeups {
  private idle: (() => void)[] = [];
  private pending = 0;

  readonly notify = (): void => {
    const next = this.idle.shift();
    if (next !== undefined) next();
    else this.pending++;
  };

  wait(signal: AbortSignal): Promise<void> {
    if (this.pending > 0 || signal.aborted) {
      this.pending = Math.max(0, this.pending - 1);
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const timer = setTimeout(done, 50); // a safety net only: onWork does the waking
      const idle = this.idle;
      function done(): void {
        clearTimeout(timer);
        const at = idle.indexOf(done);
        if (at >= 0) idle.splice(at, 1);
        resolve();
      }
      idle.push(done);
    });
  }

  wakeAll(): void {
    for (const wake of [...this.idle]) wake();
  }
}

export async function submitToTakeLatency(
  site: LogSite,
  perSecond: number,
  takers: number,
  durationMs: number,
  warmupMs: number,
): Promise<Latency> {
  const queue = await openRunQueue({ log: site.config, partitions: site.partitions });
  const submittedAt = new SubmitTimes((perSecond * (warmupMs + durationMs) * 1.1) / 1000);
  const latencies: number[] = [];
  const stop = new AbortController();
  const wakeups = new Wakeups();
  const unsubscribe = queue.onWork(wakeups.notify);
  const measureFrom = performance.now() + warmupMs;
  const workers = Array.from({ length: takers }, (_, i) =>
    taker(queue, `taker-${i}`, wakeups, stop.signal, (n) => {
      const at = submittedAt.get(n)!;
      submittedAt.delete(n);
      if (at >= measureFrom) latencies.push(performance.now() - at);
    }),
  );
  const loopDelay = monitorEventLoopDelay({ resolution: 1 });
  loopDelay.enable();
  try {
    const { submitted, seconds } = await profiled('latency', () =>
      generate(
        queue,
        {
          tenant: TENANT,
          agent: AGENT,
          threadPrefix: 'lat-',
          perSecond,
          durationMs: warmupMs + durationMs,
          clock: () => performance.now(),
        },
        submittedAt,
      ),
    );
    stop.abort();
    wakeups.wakeAll();
    await Promise.all(workers);
    loopDelay.disable();
    latencies.sort((a, b) => a - b);
    const at = (q: number): number => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? NaN;
    return {
      offeredPerSecond: perSecond,
      achievedPerSecond: submitted / seconds,
      samples: latencies.length,
      p50Ms: at(0.5),
      p99Ms: at(0.99),
      maxMs: latencies[latencies.length - 1] ?? NaN,
      loopDelayP99Ms: loopDelay.percentile(99) / 1e6,
      loopDelayMaxMs: loopDelay.max / 1e6,
    };
  } finally {
    unsubscribe();
    await queue.stop();
  }
}

async function taker(queue: RunQueue, holder: string, wakeups: Wakeups, signal: AbortSignal, took: (n: number) => void): Promise<void> {
  for (let run = 0; !signal.aborted;) {
    const taken = await queue.take({ agents: [AGENT], holder, ttlMs: 60_000 });
    if (taken === null) {
      await wakeups.wait(signal);
      continue;
    }
    took(Number(Buffer.from(taken.entry.input).toString('utf8')));
    await queue.startAttempt(taken.lease, `${holder}-${run++}`);
    await queue.close(taken.lease, { status: 'succeeded' });
  }
}
