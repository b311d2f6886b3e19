/**
 * Runs a handler under its lease: the lease keeper renews it, a close of the entry by
 * someone else (cancel, thread deleted) counts as losing it, and stopping aborts it.
 * Any of these aborts the handler's signal; from then on the handler gets at most the
 * grace period to settle before the run gives up on it (the worker must not hang on a
 * handler that never settles).
 *
 * Nothing here is made per run that most runs do not need: the handler's AbortSignal only if
 * it reads it (run-signal.ts), and the watch for a close by someone else only once the handler
 * has run WATCH_AFTER_MS (real time): a close before that is noticed then, and most runs end
 * sooner, needing no watch at all (its AbortController and awaitClosed, over HTTP a long-poll).
 * A handler that answers in the turn it is called (returns undefined, a string, or throws) gets
 * no lease keeper, watch or stop listener at all: nothing could have fired before it settled.
 */
import { RunlogError } from '../errors.ts';
import type { Attempt, Entry, Lease, RunQueueApi } from '../queue/types.ts';
import { LeaseKeeper } from './lease-keeper.ts';
import type { ResolvedOptions } from './options.ts';
import { RunSignal } from './run-signal.ts';
import type { Handler, HandlerContext, HandlerResult, Timers } from './types.ts';

export type Settled = { kind: 'value'; value: HandlerResult } | { kind: 'error'; error: unknown } | { kind: 'abandoned' };

// A run holds its Settled and Supervised until its outcome is durable: made by `new`, not literals,
// which V8 may pretenure after a backlog (src/plain-objects.ts), and a dead pretenured one keeps the
// run's young objects alive through every scavenge (seen 2026-12-07: in 2 of 20 traced worker-bench
// runs these sites and the Closer's pending close were "tenured", and ~230 KB was promoted a scavenge).
class ValueSettled {
  readonly kind = 'value';
  constructor(readonly value: HandlerResult) {}
}

class ErrorSettled {
  readonly kind = 'error';
  constructor(readonly error: unknown) {}
}

const ABANDONED: Settled = Object.freeze({ kind: 'abandoned' });

class SupervisedRun implements Supervised {
  constructor(
    readonly settled: Settled,
    readonly lease: Lease,
    readonly lost: RunlogError | null,
    readonly stopped: boolean,
    readonly pace: Pace,
  ) {}
}

/**
 * How a handler settled, for taking ahead (run-loop.ts): 'quick', in the turn it was called
 * within QUICK_HANDLER_MS; 'held', in its turn but holding the thread longer; 'async', later
 * (it answered a promise).
 */
export type Pace = 'quick' | 'held' | 'async';

export interface Supervised {
  settled: Settled;
  /** The latest lease (renewals move expiresAt). */
  lease: Lease;
  /** Why the lease was lost (or the entry closed under the run), else null. */
  lost: RunlogError | null;
  /** The handler's signal was aborted because the worker is stopping. */
  stopped: boolean;
  /** How the handler settled (see Pace). */
  pace: Pace;
}

/**
 * A handler that answers in its turn is quick only this fast (ms). Entries taken ahead wait for
 * a slot, and behind handlers that hold the thread (a blocking 5-200 ms computation) they
 * waited up to a second, so a handler started for an entry whose cancel was acknowledged
 * meanwhile (found by the hostile tester: 3-4 of 40 such entries, 30-1,155 ms after the
 * cancel). The pool's no-op handlers take microseconds; one caught by a collection or a
 * preemption on a loaded machine can take a few ms, which the pool forgives once (run-loop.ts).
 */
export const QUICK_HANDLER_MS = 2;

export function supervise(
  queue: RunQueueApi,
  options: ResolvedOptions,
  handler: Handler,
  taken: TakenRun,
  stop: AbortSignal,
): Supervised | Promise<Supervised> {
  const { entry, attempt } = taken;
  const abort = new RunSignal();
  // Stopping already: the handler's signal is aborted before it is called.
  const stoppedAtStart = stop.aborted;
  if (stoppedAtStart) abort.abort(stopping());
  const context: HandlerContext = new RunHandlerContext(entry, attempt, abort);
  // The handler is called in this turn. One that answers at once (returns a value that is not an
  // object, or throws) has settled before any timer or listener could fire: it needs none, and
  // its supervision answers at once (no promise: most runs of a busy pool take this path).
  let returned: unknown;
  const calledAt = performance.now();
  try {
    returned = handler(context);
  } catch (error) {
    return settledAtOnce(new ErrorSettled(error), taken.lease, stop.aborted, calledAt);
  }
  if (returned === undefined || returned === null || (typeof returned !== 'object' && typeof returned !== 'function')) {
    return settledAtOnce(new ValueSettled((returned ?? undefined) as HandlerResult), taken.lease, stop.aborted, calledAt);
  }
  return superviseAsync(queue, options, returned, taken, stop, abort, stoppedAtStart);
}

/** What supervise runs: a class, not a literal, as it is held as long as the handler runs (src/plain-objects.ts). */
export class TakenRun {
  constructor(
    readonly lease: Lease,
    readonly entry: Entry,
    readonly attempt: Attempt,
    /** queue.now() read before the call that granted the lease was sent (lease-keeper.ts). */
    readonly askedAt: number,
  ) {}
}

/** A handler that answered a promise (or another object): its lease kept, its entry watched, the stop heard, until it settles. */
async function superviseAsync(
  queue: RunQueueApi,
  options: ResolvedOptions,
  returned: unknown,
  taken: { lease: Lease; entry: Entry; askedAt: number },
  stop: AbortSignal,
  abort: RunSignal,
  stoppedAtStart: boolean,
): Promise<Supervised> {
  let stopped = stoppedAtStart;
  let stopHeard = stoppedAtStart;
  // Heard once: at the start if stopping already (above), or as the stop comes.
  const onStop = (): void => {
    if (stopHeard) return;
    stopHeard = true;
    stopped = !abort.aborted;
    abort.abort(stopping());
  };
  const keeper = new LeaseKeeper(
    queue,
    taken.lease,
    options.leaseMs,
    options.timers,
    (reason) => abort.abort(reason),
    options.onEvent,
    taken.askedAt,
  );
  if (stop.aborted) onStop();
  else stop.addEventListener('abort', onStop, { once: true });
  const unwatch = watchCloseSoon(queue, taken.entry, (reason) => keeper.markLost(reason));
  keeper.start();
  try {
    const running = (async (): Promise<HandlerResult> => ((await returned) as HandlerResult | null | undefined) ?? undefined)();
    const settled = await settleWithin(running, abort, options.graceMs, options.timers);
    return new SupervisedRun(settled, keeper.lease, keeper.lost, stopped && keeper.lost === null, 'async');
  } finally {
    stop.removeEventListener('abort', onStop);
    unwatch();
    await keeper.stop();
  }
}

/**
 * What the handler gets. A class, its `signal` a getter on the prototype (made on first read:
 * run-signal.ts): an object literal with a getter is built by V8's slow path, several µs per
 * run, the largest single cost of a quick handler's run. Destructuring or reading
 * `context.signal` works as on any object; a spread copy (`{ ...context }`) has no `signal`.
 */
class RunHandlerContext implements HandlerContext {
  readonly input: Uint8Array;
  readonly attempt: number;
  readonly runId: string;
  readonly #abort: RunSignal;

  constructor(
    readonly entry: Entry,
    attempt: Attempt,
    abort: RunSignal,
  ) {
    this.input = entry.input;
    this.attempt = attempt.attempt;
    this.runId = attempt.runId;
    this.#abort = abort;
  }

  get signal(): AbortSignal {
    return this.#abort.signal;
  }
}

function stopping(): RunlogError {
  return new RunlogError('Stopped', 'the worker is stopping');
}

/** A handler that answered in the turn it was called: no lease was lost meanwhile (nothing ran); `stopped` if the worker is stopping. */
function settledAtOnce(settled: Settled, lease: Lease, stopped: boolean, calledAt: number): Supervised {
  return new SupervisedRun(settled, lease, null, stopped, performance.now() - calledAt < QUICK_HANDLER_MS ? 'quick' : 'held');
}

/** The handler's outcome; 'abandoned' when it has not settled graceMs after `signal` aborted. */
function settleWithin(running: Promise<HandlerResult>, signal: RunSignal, graceMs: number, timers: Timers): Promise<Settled> {
  return new Promise((resolve) => {
    let handle: unknown;
    const finish = (settled: Settled): void => {
      timers.clearTimeout(handle);
      signal.offAbort();
      resolve(settled);
    };
    running.then(
      (value) => finish(new ValueSettled(value)),
      (error: unknown) => finish(new ErrorSettled(error)),
    );
    signal.onAbort(() => {
      handle = timers.setTimeout(() => finish(ABANDONED), graceMs);
    });
  });
}

/** How long a handler runs before its entry is watched for a close by someone else (cancel, thread deleted), ms of real time. */
export const WATCH_AFTER_MS = 20;

/** Why a watch ended: one value, so that ending one makes no exception (an abort() without a reason makes a DOMException). */
const UNWATCHED = new RunlogError('Stopped', 'the run no longer watches its entry');

/** Calls `onClosed` if the entry closes while the run holds it, watching from WATCH_AFTER_MS on; the answer stops watching. */
function watchCloseSoon(queue: RunQueueApi, entry: Entry, onClosed: (reason: RunlogError) => void): () => void {
  let watching: AbortController | null = null;
  const timer = setTimeout(() => {
    const controller = (watching = new AbortController());
    queue.awaitClosed(entry.tenant, entry.entryId, { signal: controller.signal }).then(
      (closed) => {
        if (closed !== null && !controller.signal.aborted) {
          onClosed(new RunlogError('EntryClosed', `entry ${entry.entryId} was closed (${closed.outcome}) while it ran`));
        }
      },
      () => {
        // Stopped watching, or the queue stopped: the lease keeper reports what matters.
      },
    );
  }, WATCH_AFTER_MS);
  return () => {
    clearTimeout(timer);
    watching?.abort(UNWATCHED);
  };
}
