/**
 * Warming Kafka's broker before measuring it. A freshly started broker's JVM runs its
 * transaction and produce paths interpreted at first; the JIT compiles them over minutes of
 * load, and runlog's lifecycles/s on it roughly triple meanwhile (about 1,500/s in the first
 * window on a new broker of this 2-core machine, 6,000/s and more once warm). The figures
 * the bench prints are the steady state, so on Kafka it first runs lifecycle windows on a
 * throwaway topic for at least MIN_WARM_UP_MS, and then until SETTLED_WINDOWS windows in a
 * row brought no new best (better than the best before by WARM_GAIN), or until
 * MAX_WARM_UP_MS. The rise is uneven, in steps with plateaus between them (the JIT's
 * compiler threads compete for the same two cores): a fresh broker has been seen to
 * plateau near 4,500/s for 20 s before rising to 6,500/s, hence the minimum. Each window's
 * rate is printed, so the warm-up is on the record.
 */
import { createLogSite, type LogKind } from './logs.ts';
import { lifecycleRate } from './throughput.ts';

const WINDOW_MS = 5_000;
const SETTLED_WINDOWS = 3;
const MIN_WARM_UP_MS = 120_000;
const WARM_GAIN = 1.05;
const MAX_WARM_UP_MS = 300_000;

export interface WarmUp {
  windows: number[];
  seconds: number;
}

export async function warmUp(kind: LogKind, partitions: number, callers: number, progress: (message: string) => void): Promise<WarmUp> {
  const started = performance.now();
  const windows: number[] = [];
  let best = 0;
  let sinceBest = 0;
  for (;;) {
    const site = await createLogSite(kind, 'warm-up', partitions);
    const rate = await lifecycleRate(site, callers, WINDOW_MS, 200);
    await site.remove();
    windows.push(Math.round(rate.perSecond));
    progress(`warm-up window ${windows.length}: ${Math.round(rate.perSecond)} lifecycles/s`);
    if (rate.perSecond > best * WARM_GAIN) sinceBest = 0;
    else sinceBest++;
    best = Math.max(best, rate.perSecond);
    const elapsed = performance.now() - started;
    if ((sinceBest >= SETTLED_WINDOWS && elapsed >= MIN_WARM_UP_MS) || elapsed > MAX_WARM_UP_MS) break;
  }
  return { windows, seconds: (performance.now() - started) / 1000 };
}
