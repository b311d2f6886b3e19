/**
 * A take that waits: lease the best head, or wait up to `waitMs` for one, never polling. The
 * server's long-poll take (src/server/long-poll-take.ts) runs it over one queue; the cluster
 * client (src/client/cluster-take.ts) over rounds of the nodes, with the union of their work
 * signals.
 *
 * Before each take it listens for work, so an entry that becomes takeable between a take
 * finding nothing and the wait starting still wakes it. After a take finds nothing it waits for
 * the first of:
 *   - a work signal (an entry became takeable now: a submit, a yield, a close unblocking a
 *     thread, ...);
 *   - the store-clock time nextDueAt names (a delay, a backoff or a lease running out), as a
 *     timer of that length. A time passed already is tried once more at once (the clock moved
 *     since the take), then not waited for again: what is due then is not this caller's to take
 *     (its lease went to another), and waiting on it would spin;
 *   - the end of waitMs;
 *   - the signal;
 * then takes once more, while time remains. A take's lease is always answered, even when the
 * signal aborted meanwhile; with nothing taken, an aborted signal ends the wait as `ended` says.
 */
import type { Taken } from '../queue/types.ts';

export interface WaitingTake {
  /** One take that does not wait. */
  take(): Promise<Taken | null>;
  /** When the next waiting head falls due (store time), or null when none or unknown. */
  nextDueAt(): Promise<number | null>;
  /** Store time now. */
  now(): number;
  /** Listens for work; answers the function that stops listening. */
  onWork(listener: () => void): () => void;
  /** Before each take: throws to end the wait with an error, answers true to end it with null. */
  ended(): boolean;
}

export async function takeWaiting(source: WaitingTake, waitMs: number, signal: AbortSignal): Promise<Taken | null> {
  const until = performance.now() + waitMs;
  let passed: number | undefined; // a due time already tried once after it passed
  for (;;) {
    if (source.ended()) return null;
    const wake = new Wake(source.onWork, signal);
    try {
      const taken = await source.take();
      const left = until - performance.now();
      if (taken !== null || left <= 0) return taken;
      if (wake.woken || signal.aborted) continue;
      const dueAt = await source.nextDueAt();
      if (dueAt === null || dueAt === passed) await wake.wait(left, undefined);
      else if (dueAt > source.now()) await wake.wait(left, dueAt - source.now());
      else passed = dueAt; // due by now (the clock moved since the take): take once more, at once
    } finally {
      wake.dispose();
    }
  }
}

/** One wait: woken by a work signal (heard from its creation on), a timer or the signal. */
class Wake {
  woken = false;
  #resolve: (() => void) | undefined;
  #timer: NodeJS.Timeout | undefined;
  readonly #unlisten: () => void;
  readonly #onAbort = (): void => this.#wake();

  constructor(
    onWork: (listener: () => void) => () => void,
    private readonly signal: AbortSignal,
  ) {
    this.#unlisten = onWork(() => this.#wake());
    signal.addEventListener('abort', this.#onAbort, { once: true });
  }

  /** Resolves when woken, after `leftMs`, or after `dueMs` when given and sooner. */
  wait(leftMs: number, dueMs: number | undefined): Promise<void> {
    if (this.woken || this.signal.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      this.#resolve = resolve;
      this.#timer = setTimeout(() => this.#wake(), Math.min(leftMs, dueMs ?? leftMs));
    });
  }

  dispose(): void {
    this.#unlisten();
    this.signal.removeEventListener('abort', this.#onAbort);
    clearTimeout(this.#timer);
  }

  #wake(): void {
    this.woken = true;
    this.#resolve?.();
  }
}
