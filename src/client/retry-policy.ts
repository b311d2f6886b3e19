/**
 * Which failed calls the client tries again, and for how long (with runlog's one retrier,
 * src/retry.ts). A call is retried only when repeating it cannot do anything twice:
 *
 *   - Any call whose request never left this process (the connection was refused, the host
 *     unknown, no route: `wasNotSent`): the server saw nothing, so trying again is the first
 *     try. This covers a server restarting under its workers.
 *   - A repeatable call that got no answer (a reset, a timeout, the answer cut off) or the
 *     retriable refusal LogUnavailable (the server's log failed; it rebuilds and serves
 *     again). Repeatable: the reads (entry, openEntries, awaitClosed, nextDueAt, metrics,
 *     health, now), which change nothing; extend, whose repeat sets the same lease's expiry
 *     again from a later now; and a submit with a `key`, whose repeat names the same entry
 *     (answering `created: false` if the first try had been made durable).
 *   - Nothing else. A take or takeEntry whose answer was lost may have leased an entry: a
 *     repeat would lease another (or answer null) while the first lease sits unseen until it
 *     expires. A submit without a key may have created its entry: a repeat creates a second.
 *     startAttempt, yield, close, cancel, deleteThread and prune would answer a refusal or a
 *     different count for what the first try did (RunIdReused, false, EntryClosed, 0). These
 *     fail with the retriable LogUnavailable: the caller, who knows what the call meant, decides.
 *
 * Other retriable refusals are the caller's to handle too: QueueFull and ThreadBusy are
 * answers about the queue (back-pressure, a busy thread), not failures of the path to it.
 */
import { isRunlogError } from '../errors.ts';
import { retry } from '../retry.ts';
import { wasNotSent } from './http.ts';

/** Whether a call may be sent again after an answer that was lost (see the top). */
export type Repeatable = 'repeatable' | 'once';

export interface RetrySettings {
  /** Give up retrying this long after the first try began, ms (0: never retry). */
  forMs: number;
  /** The first pause, ms; pauses double up to maxMs. */
  firstMs: number;
  maxMs: number;
}

export const DEFAULT_RETRY: RetrySettings = { forMs: 10_000, firstMs: 50, maxMs: 1_000 };

/** Whether a call that failed with `error` may be tried again. */
export function mayRetry(error: unknown, repeatable: Repeatable): boolean {
  if (wasNotSent(error)) return true;
  return repeatable === 'repeatable' && isRunlogError(error, 'LogUnavailable');
}

/** Runs `call`, trying again by the policy above until it succeeds, `settings.forMs` passes, or `signal` (the client's stop) aborts. */
export function withRetries<T>(call: () => Promise<T>, repeatable: Repeatable, settings: RetrySettings, signal: AbortSignal): Promise<T> {
  if (settings.forMs === 0) return call();
  return retry(call, {
    firstMs: settings.firstMs,
    maxMs: settings.maxMs,
    forMs: settings.forMs,
    retriable: (error) => mayRetry(error, repeatable),
    signal,
  });
}
