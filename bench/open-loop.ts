/** The open-loop load of the latency runs: submits at a fixed rate whatever the queue answers. */
import type { RunQueueApi } from '../src/queue/types.ts';

export interface OpenLoop {
  tenant: string;
  agent: string;
  /** Entry n goes on thread `${threadPrefix}${n}` with input "n". */
  threadPrefix: string;
  perSecond: number;
  durationMs: number;
  /** The clock submit times are read from (the run's own: monotonic in process, epoch across processes). */
  clock: () => number;
}

/**
 * Each entry's submit time, by its number n, in a Float64Array off V8's heap: a Map of 60,000
 * boxed times filled during the window would itself grow the old generation by megabytes and
 * bring on the full collections the window measures the tail of (bench/gc-account.ts).
 */
export class SubmitTimes {
  #times: Float64Array;

  /** `expected`: about how many entries will be submitted (it grows past that if need be). */
  constructor(expected = 1024) {
    this.#times = new Float64Array(Math.max(1024, Math.ceil(expected))).fill(NaN);
  }

  set(n: number, at: number): void {
    if (n >= this.#times.length) {
      const grown = new Float64Array(Math.max(n + 1, this.#times.length * 2)).fill(NaN);
      grown.set(this.#times);
      this.#times = grown;
    }
    this.#times[n] = at;
  }

  /** Entry n's submit time, or undefined if none was recorded (or it was deleted). */
  get(n: number): number | undefined {
    const at = this.#times[n];
    return at === undefined || Number.isNaN(at) ? undefined : at;
  }

  delete(n: number): void {
    if (n < this.#times.length) this.#times[n] = NaN;
  }

  /** [n, time] of every recorded entry, by n. */
  *entries(): IterableIterator<[number, number]> {
    for (let n = 0; n < this.#times.length; n++) {
      const at = this.#times[n]!;
      if (!Number.isNaN(at)) yield [n, at];
    }
  }
}

/** Submits at `perSecond` (checked every millisecond) for `durationMs`, recording each entry's submit time. */
export async function generate(
  queue: RunQueueApi,
  load: OpenLoop,
  submittedAt: SubmitTimes,
): Promise<{ submitted: number; seconds: number }> {
  const started = performance.now();
  const inFlight = new Set<Promise<unknown>>();
  let n = 0;
  for (let now = started; now - started < load.durationMs; now = performance.now()) {
    const due = Math.floor(((now - started) / 1000) * load.perSecond);
    for (; n < due; n++) {
      submittedAt.set(n, load.clock());
      const submit = queue.submit({ tenant: load.tenant, thread: `${load.threadPrefix}${n}`, agent: load.agent, input: String(n) });
      inFlight.add(submit);
      void submit.finally(() => inFlight.delete(submit));
    }
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  const seconds = (performance.now() - started) / 1000;
  await Promise.all(inFlight);
  return { submitted: n, seconds };
}
