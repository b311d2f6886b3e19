/**
 * Runs a handler under its lease: the lease keeper renews it, a close of the entry by
 * someone else (cancel, thread deleted) counts as losing it, and stopping aborts it.
 * Any of these aborts the handler's signal; from then on the handler gets at most the
 * grace period to settle before the run gives up on it (the worker must not hang on a
 * handler that never settles).
 */
import { RunlogError } from '../errors.ts';
import type { Attempt, Entry, Lease, RunQueueApi } from '../queue/types.ts';
import { LeaseKeeper } from './lease-keeper.ts';
import type { ResolvedOptions } from './options.ts';
import type { Handler, HandlerResult, Timers } from './types.ts';

export type Settled = { kind: 'value'; value: HandlerResult } | { kind: 'error'; error: unknown } | { kind: 'abandoned' };

export interface Supervised {
  settled: Settled;
  /** The latest lease (renewals move expiresAt). */
  lease: Lease;
  /** Why the lease was lost (or the entry closed under the run), else null. */
  lost: RunlogError | null;
  /** The handler's signal was aborted because the worker is stopping. */
  stopped: boolean;
}

export async function supervise(
  queue: RunQueueApi,
  options: ResolvedOptions,
  handler: Handler,
  taken: { lease: Lease; entry: Entry; attempt: Attempt },
  stop: AbortSignal,
): Promise<Supervised> {
  const { entry, attempt } = taken;
  const abort = new AbortController();
  const keeper = new LeaseKeeper(queue, taken.lease, options.leaseMs, options.timers, (reason) => abort.abort(reason), options.onEvent);
  let stopped = false;
  const onStop = (): void => {
    stopped = !abort.signal.aborted;
    abort.abort(new RunlogError('Stopped', 'the worker is stopping'));
  };
  if (stop.aborted) onStop();
  else stop.addEventListener('abort', onStop, { once: true });
  const unwatch = watchClose(queue, entry, (reason) => keeper.markLost(reason));
  keeper.start();
  try {
    const running: Promise<HandlerResult> = Promise.resolve().then(
      async () =>
        (await handler({ entry, input: entry.input, attempt: attempt.attempt, runId: attempt.runId, signal: abort.signal })) ?? undefined,
    );
    const settled = await settleWithin(running, abort.signal, options.graceMs, options.timers);
    return { settled, lease: keeper.lease, lost: keeper.lost, stopped: stopped && keeper.lost === null };
  } finally {
    stop.removeEventListener('abort', onStop);
    unwatch();
    await keeper.stop();
  }
}

/** The handler's outcome; 'abandoned' when it has not settled graceMs after `signal` aborted. */
function settleWithin(running: Promise<HandlerResult>, signal: AbortSignal, graceMs: number, timers: Timers): Promise<Settled> {
  return new Promise((resolve) => {
    let handle: unknown;
    const finish = (settled: Settled): void => {
      timers.clearTimeout(handle);
      signal.removeEventListener('abort', onAbort);
      resolve(settled);
    };
    const onAbort = (): void => {
      handle = timers.setTimeout(() => finish({ kind: 'abandoned' }), graceMs);
    };
    running.then(
      (value) => finish({ kind: 'value', value }),
      (error: unknown) => finish({ kind: 'error', error }),
    );
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** Calls `onClosed` if the entry closes while the run holds it; the answer stops watching. */
function watchClose(queue: RunQueueApi, entry: Entry, onClosed: (reason: RunlogError) => void): () => void {
  const watching = new AbortController();
  queue.awaitClosed(entry.tenant, entry.entryId, { signal: watching.signal }).then(
    (closed) => {
      if (closed !== null && !watching.signal.aborted) {
        onClosed(new RunlogError('EntryClosed', `entry ${entry.entryId} was closed (${closed.outcome}) while it ran`));
      }
    },
    () => {
      // Stopped watching, or the queue stopped: the lease keeper reports what matters.
    },
  );
  return () => watching.abort();
}
