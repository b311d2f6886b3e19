/**
 * The floor of submit-to-handler-start on a log, measured beside the Worker's latency in the
 * same run: an entry's handler may start only once two appends are durable one after the
 * other (its submission, then its lease with the attempt started: takeStarted), so an
 * open-loop generator at the same rate appends, per entry, the Submitted record and then the
 * Leased and AttemptStarted records, straight to the log, and times the pair. No queue, no
 * worker: what the log's write and datasync alone cost at that rate and load.
 */
import { randomUUID } from 'node:crypto';
import { openLog } from '../src/log/open-log.ts';
import type { LogSite } from './logs.ts';
import { benchEntryId, lifecycleEvents, recordsOf, TENANT } from './throughput.ts';

export interface LatencyFloor {
  samples: number;
  p50Ms: number;
  p99Ms: number;
}

export async function latencyFloor(site: LogSite, perSecond: number, durationMs: number, warmupMs: number): Promise<LatencyFloor> {
  const log = await openLog(site.config, site.partitions);
  try {
    const [submitted, leased, started] = recordsOf(lifecycleEvents(TENANT, 'floor', benchEntryId(0, 1), 1, Date.now(), randomUUID()));
    const latencies: number[] = [];
    const inFlight = new Set<Promise<void>>();
    const measureFrom = performance.now() + warmupMs;
    const pair = async (): Promise<void> => {
      const at = performance.now();
      await log.append(0, [submitted!]);
      await log.append(0, [leased!, started!]);
      if (at >= measureFrom) latencies.push(performance.now() - at);
    };
    const begun = performance.now();
    let n = 0;
    for (let now = begun; now - begun < warmupMs + durationMs; now = performance.now()) {
      for (const due = Math.floor(((now - begun) / 1000) * perSecond); n < due; n++) {
        const run = pair();
        inFlight.add(run);
        void run.finally(() => inFlight.delete(run));
      }
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    await Promise.all(inFlight);
    latencies.sort((a, b) => a - b);
    const at = (q: number): number => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? NaN;
    return { samples: latencies.length, p50Ms: at(0.5), p99Ms: at(0.99) };
  } finally {
    await log.close();
  }
}
