/**
 * runlog's one retrier (kafkajs's src/retry/index.js is the model) and its one sleep.
 *
 * A try that fails is tried again after a pause, until it succeeds or the retrier gives up:
 *   - bail: `retriable(error)` says no (the error is thrown as it is, at once);
 *   - the tries (`tries`) or the time (`forMs`, since the first try began) are used up: the
 *     last error is thrown;
 *   - the signal aborts: its reason is thrown (an AbortError unless the aborter gave one).
 * Pauses grow by `factor` from `firstMs` up to the cap `maxMs`, and each is drawn at random
 * within ±`jitter` of that (never past the cap), so writers that failed together do not all
 * try again at the same instant.
 *
 * `retry(attempt, options)` runs a function. A loop that cannot be one function (an async
 * generator that yields between its tries, a loop with work between tries) holds a Backoff
 * and calls `await backoff.after(error)` in its catch: the same rules, one pause at a time.
 */
import { setTimeout as timersSetTimeout } from 'node:timers/promises';

export interface RetryOptions {
  /** The first pause, in ms. */
  firstMs: number;
  /** The longest pause (the cap), in ms; a function when it depends on the error (an answer that says "soon" deserves short pauses). */
  maxMs: number | ((error: unknown) => number);
  /** How much each pause grows over the one before it; 2 unless given. */
  factor?: number;
  /** How far a pause may stray from its nominal length, as a fraction of it (0 to 1); 0.2 unless given. */
  jitter?: number;
  /** The most tries in all, the first included; no limit unless given. */
  tries?: number;
  /** Give up once this long has passed since the first try began, in ms; no limit unless given. */
  forMs?: number;
  /** Whether a failed try is worth another one; false bails (the error is thrown at once). Every error is unless given. */
  retriable?: (error: unknown) => boolean;
  /** Aborting it ends the retries: a pause under way ends at once and its reason is thrown. */
  signal?: AbortSignal;
  /** Whether a pause keeps the process alive; true unless given. */
  ref?: boolean;
  /** For tests: the sleep, the random source (0 to 1) and the clock (ms) the retrier uses. */
  sleep?: (ms: number, options: SleepOptions) => Promise<void>;
  random?: () => number;
  now?: () => number;
}

export interface SleepOptions {
  signal?: AbortSignal | undefined;
  /** Whether the sleep keeps the process alive; true unless given. */
  ref?: boolean | undefined;
}

/** Resolves after `ms`; rejects with the signal's reason once it aborts. */
export async function sleep(ms: number, options: SleepOptions = {}): Promise<void> {
  const { signal, ref = true } = options;
  if (signal?.aborted) throw signal.reason;
  try {
    await timersSetTimeout(ms, undefined, { signal, ref });
  } catch (error) {
    throw signal?.aborted ? signal.reason : error; // timers/promises throws its own AbortError, not the reason
  }
}

/** Runs `attempt` (given the try's number, from 1) until it succeeds or the retrier gives up (see the top). */
export async function retry<T>(attempt: (tryNumber: number) => Promise<T>, options: RetryOptions): Promise<T> {
  const backoff = new Backoff(options);
  for (;;) {
    try {
      return await attempt(backoff.tries + 1);
    } catch (error) {
      await backoff.after(error);
    }
  }
}

/** The pauses of one run of tries (see the top). */
export class Backoff {
  readonly #options: RetryOptions;
  readonly #now: () => number;
  readonly #startedAt: number;
  #failed = 0;

  constructor(options: RetryOptions) {
    checkOptions(options);
    this.#options = options;
    this.#now = options.now ?? (() => performance.now());
    this.#startedAt = this.#now();
  }

  /** How many tries have failed so far. */
  get tries(): number {
    return this.#failed;
  }

  /** After a failed try: throws (see the top), or pauses before the next one. */
  async after(error: unknown): Promise<void> {
    this.#failed++;
    const { retriable, tries, forMs, signal, ref } = this.#options;
    if (signal?.aborted) throw signal.reason;
    if (retriable !== undefined && !retriable(error)) throw error;
    if (tries !== undefined && this.#failed >= tries) throw error;
    if (forMs !== undefined && this.#now() - this.#startedAt >= forMs) throw error;
    await (this.#options.sleep ?? sleep)(this.#pauseMs(error), { signal, ref });
  }

  /** The pause after the current failed try: nominal length times factor^(failed - 1), jittered, capped. */
  #pauseMs(error: unknown): number {
    const { firstMs, maxMs, factor = 2, jitter = 0.2, random = Math.random } = this.#options;
    const cap = typeof maxMs === 'number' ? maxMs : maxMs(error);
    const nominal = Math.min(firstMs * factor ** (this.#failed - 1), cap);
    const jittered = nominal * (1 - jitter + 2 * jitter * random());
    return Math.round(Math.min(jittered, cap));
  }
}

function checkOptions(options: RetryOptions): void {
  const { firstMs, factor = 2, jitter = 0.2, tries } = options;
  if (!(firstMs >= 0)) throw new RangeError(`firstMs must be 0 or more, got ${firstMs}`);
  if (!(factor >= 1)) throw new RangeError(`factor must be 1 or more, got ${factor}`);
  if (!(jitter >= 0 && jitter <= 1)) throw new RangeError(`jitter must be between 0 and 1, got ${jitter}`);
  if (tries !== undefined && !(Number.isInteger(tries) && tries >= 1))
    throw new RangeError(`tries must be a whole number from 1, got ${tries}`);
}
