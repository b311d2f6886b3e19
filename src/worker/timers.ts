/** Timers: the global ones by default; tests pass manual ones. */
import type { Timers } from './types.ts';

export const realTimers: Timers = {
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

/** Resolves after `ms`, or at once when `signal` aborts (never rejects). */
export function delay(timers: Timers, ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = (): void => {
      timers.clearTimeout(handle);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const handle = timers.setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}
