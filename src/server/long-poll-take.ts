/**
 * The long-poll take: lease the best head, or wait up to `waitMs` for one. It never polls.
 * Before each take it listens for the queue's work signal, so a submit that lands between a
 * take finding nothing and the wait starting still wakes it. After a take finds nothing it
 * waits for the first of:
 *   - the queue's onWork (an entry became takeable now: a submit, a yield, a close unblocking
 *     a thread, ...);
 *   - the store-clock time nextDueAt(agents, tenants) names (a delay, a backoff or a lease running
 *     out), as a timer of that length. A time passed already is tried once more at once (the
 *     clock moved since the take), then not waited for again: what is due then is not this
 *     caller's to take (its lease went to another), and waiting on it would spin;
 *   - the end of waitMs;
 *   - the signal: the client went away, or the server closes;
 * then takes once more, while time remains. When the wait ends with nothing, or the signal
 * aborts, it answers null and holds no lease: a take is only made while the signal is live,
 * and a take's lease is answered (a client gone by then never reads it; the lease runs out).
 */
import type { RunQueueApi, Taken, TakeRequest } from '../queue/types.ts';

export async function takeWaiting(queue: RunQueueApi, request: TakeRequest, waitMs: number, signal: AbortSignal): Promise<Taken | null> {
  const until = performance.now() + waitMs;
  let passed: number | undefined; // a due time already tried once after it passed
  for (;;) {
    if (signal.aborted) return null;
    const wake = new Wake(queue, signal);
    try {
      const taken = await queue.take(request);
      const left = until - performance.now();
      if (taken !== null || left <= 0 || signal.aborted) return taken;
      if (wake.woken) continue;
      const dueAt = await queue.nextDueAt(request.agents, request.tenants);
      if (dueAt === null || dueAt === passed) await wake.wait(left, undefined);
      else if (dueAt > queue.now()) await wake.wait(left, dueAt - queue.now());
      else passed = dueAt; // due by now (the clock moved since the take): take once more, at once
    } finally {
      wake.dispose();
    }
  }
}

/** One wait: woken by the queue's work signal (heard from its creation on), a timer or the signal. */
class Wake {
  woken = false;
  #resolve: (() => void) | undefined;
  #timer: NodeJS.Timeout | undefined;
  readonly #unlisten: () => void;
  readonly #onAbort = (): void => this.#wake();

  constructor(
    queue: RunQueueApi,
    private readonly signal: AbortSignal,
  ) {
    this.#unlisten = queue.onWork(() => this.#wake());
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
