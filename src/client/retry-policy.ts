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
 *
 * A cluster's client (cluster-queue.ts) also sends again, to the owner its map then names,
 * what a node refused without doing anything: NotOwner (the partition is another node's, or
 * the group is rebalancing: the node refuses before it decides anything) and Stopped (the
 * node is shutting down: it refuses requests before they reach its queue). Any call may be
 * sent again after these, a take and an unkeyed submit too: the first try did nothing.
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

/** Whether a cluster's client may send a call again (to its partition's owner, by a map read again) after `error`. */
export function mayRetryInCluster(error: unknown, repeatable: Repeatable): boolean {
  return wasRefused(error) || mayRetry(error, repeatable);
}

/** Whether `error` says the call did nothing: never sent, or refused by a node that does not serve it (NotOwner) or is shutting down (Stopped). */
export function wasRefused(error: unknown): boolean {
  return wasNotSent(error) || isRunlogError(error, 'NotOwner') || isRunlogError(error, 'Stopped');
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
