/**
 * Wakes idle runs without polling. `generation` counts notifications: a run notes it before
 * asking the queue for work, and `wait` returns at once if a notification came since, so a
 * wake-up between "the queue had nothing" and "start waiting" is never lost.
 */
import type { Timers } from './types.ts';

export class Waker {
  generation = 0;
  private readonly waiters = new Set<() => void>();

  constructor(private readonly timers: Timers) {}

  /** Work may have arrived: wakes one waiting run (a run that finds work wakes the next). */
  notifyOne(): void {
    this.generation++;
    const first = this.waiters.values().next();
    if (!first.done) first.value();
  }

  /** Time moved or something changed for everyone: wakes every waiting run. */
  notifyAll(): void {
    this.generation++;
    for (const waiter of [...this.waiters]) waiter();
  }

  /** Waits until notified after `seen`, for `ms`, or until `signal` aborts. */
  wait(seen: number, ms: number, signal: AbortSignal): Promise<void> {
    if (this.generation !== seen || signal.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const done = (): void => {
        this.waiters.delete(done);
        this.timers.clearTimeout(handle);
        signal.removeEventListener('abort', done);
        resolve();
      };
      const handle = this.timers.setTimeout(done, ms);
      signal.addEventListener('abort', done, { once: true });
      this.waiters.add(done);
    });
  }
}
