/**
 * One run of a taken entry, start to outcome:
 *
 *   no attempts left ------------------------------> close failed (parked), handler not called
 *   attempt started (durable before the handler runs: takeStarted started it with the lease,
 *     or startAttempt here for an entry taken alone) -> supervise the handler under its lease
 *     value, lease held ---------------------------> close succeeded with the result
 *     error / bad or refused result, lease held ---> yield retry after backoff(attempt), or
 *                                                     close failed (parked) on the last attempt
 *     stopping cut it short -----------------------> yield defer: runs again at once, not a failure
 *     lease lost / entry closed under it ----------> its late close or yield is refused: swallowed, counted
 *     handler never settled within the grace ------> abandoned: the lease is left to expire, so
 *                                                     nobody else runs the thread while it may still work
 */
import { randomUUID } from 'node:crypto';
import { catchRejection } from '../call-listener.ts';
import { RunlogError, isRunlogError } from '../errors.ts';
import { attemptLimit, attemptsUsedUp, countedAttempts } from '../queue/decide.ts';
import { SUCCEEDED_RUN } from '../queue/in-process.ts';
import type { Attempt, CloseRequest, Entry, Lease, RunQueueApi, Started, Taken } from '../queue/types.ts';
import { describe } from '../validation/index.ts';
import { badResult, describeFailure, recordableError } from './failure.ts';
import type { ResolvedOptions } from './options.ts';
import { TakenRun, supervise, type Pace, type Supervised } from './supervise.ts';
import type { Handler, RunOutcome } from './types.ts';
import type { CounterName, WorkerMetrics } from './worker-metrics.ts';

export interface RunContext {
  queue: RunQueueApi;
  options: ResolvedOptions;
  metrics: WorkerMetrics;
  handlerOf(agent: string): Handler;
  /** Closes an entry under its lease, grouped with the closes of other runs (closer.ts); rejects with the item's refusal. */
  close(lease: Lease, request: CloseRequest): Promise<void>;
  /** Called once an entry this worker ran has closed; answers the id of an entry it submitted (periodic work), or null (at once when it submits none). */
  afterClose(entry: Entry): Promise<string | null> | null;
}

export interface RunReport {
  outcome: RunOutcome;
  entry: Entry;
  attempt: number;
  /** What the handler threw (or why its result was refused), when the attempt failed. */
  error?: unknown;
  /** The recorded error text (failed attempts, parking). */
  errorText?: string;
  /** The entry submitted after this one closed (periodic work's next entry). */
  next?: string;
}

/** A RunReport made by `new`, not a literal: the pool holds it until the run's outcome is recorded (src/plain-objects.ts). */
class Report implements RunReport {
  constructor(
    readonly outcome: RunOutcome,
    readonly entry: Entry,
    readonly attempt: number,
    readonly error?: unknown,
    readonly errorText?: string,
    readonly next?: string,
  ) {}
}

/**
 * Runs one taken entry to its outcome: a Started one (takeStarted) has its attempt started
 * already (null: none was left); a Taken one (take, takeEntry) starts it here. `askedAt`:
 * queue.now() read before the take was sent (the lease runs out no sooner than that plus its
 * length: lease-keeper.ts). Never rejects for a handler's fault; rejects only when the queue
 * fails. `handlerDone` hears when the handler has settled, before the outcome is made durable
 * (the pool frees the run's slot then), and how it settled (Pace).
 */
export async function runEntry(
  ctx: RunContext,
  taken: Taken | Started,
  stop: AbortSignal,
  askedAt: number,
  handlerDone: (pace: Pace) => void = () => {},
): Promise<RunReport> {
  const agent = taken.entry.agent;
  ctx.metrics.runStarted(agent);
  try {
    const report = await runLeased(ctx, taken, stop, askedAt, handlerDone);
    count(ctx, report);
    if (report.outcome !== 'succeeded' && report.outcome !== 'parked') return report;
    const after = ctx.afterClose(taken.entry);
    const next = after === null ? null : await after;
    return next === null ? report : new Report(report.outcome, report.entry, report.attempt, report.error, report.errorText, next);
  } finally {
    ctx.metrics.runEnded(agent);
  }
}

/** `handlerDone` is called once the handler has settled (or been abandoned), before its outcome is recorded. */
async function runLeased(
  ctx: RunContext,
  taken: Taken | Started,
  stop: AbortSignal,
  askedAt: number,
  handlerDone: (pace: Pace) => void,
): Promise<RunReport> {
  const { lease, entry } = taken;
  const attempt = 'attempt' in taken && taken.attempt !== null ? taken.attempt : await startHere(ctx, lease, entry, stop);
  if (!isAttempt(attempt)) return attempt;
  const made = attempt.attempt - 1 - entry.deferredAttempts;
  if (stop.aborted || tooLateToRun(ctx, askedAt)) return handBack(ctx, lease, entry, made + 1);
  ctx.metrics.wait(entry.agent, Math.max(0, attempt.startedAt - entry.submittedAt));
  // The run's time by the store clock on both ends: the attempt's startedAt is in its partition's time (partition-lead.ts).
  const ranFrom = ctx.queue.now();
  const supervising = supervise(ctx.queue, ctx.options, ctx.handlerOf(entry.agent), new TakenRun(lease, entry, attempt, askedAt), stop);
  const supervised = supervising instanceof Promise ? await supervising : supervising;
  handlerDone(supervised.pace);
  ctx.metrics.exec(entry.agent, Math.max(0, ctx.queue.now() - ranFrom));
  // Most runs succeed: their close is awaited here, not in an async function more (one promise and a frame less per run).
  const success = successOf(supervised);
  if (success === null) return record(ctx, supervised, entry, made + 1);
  try {
    await ctx.close(supervised.lease, success);
    return new Report('succeeded', entry, made + 1);
  } catch (error) {
    return closeRefused(ctx, supervised.lease, entry, made + 1, error);
  }
}

/** The close of a run that succeeded (its handler answered a recordable value, and the worker is not stopping), else null. */
function successOf({ settled, stopped }: Supervised): CloseRequest | null {
  if (settled.kind !== 'value' || stopped || badResult(settled.value) !== null) return null;
  return settled.value === undefined ? SUCCEEDED_RUN : { status: 'succeeded', result: settled.value };
}

/** The attempt of an entry taken without one (takeStarted's null: none left, so it parks): started here, or the run's report if it ends first. */
async function startHere(ctx: RunContext, lease: Lease, entry: Entry, stop: AbortSignal): Promise<Attempt | RunReport> {
  const made = countedAttempts(entry);
  if (attemptsUsedUp(entry, ctx.options.maxAttempts, made)) {
    return park(ctx, lease, entry, made, `parked: ${made} attempts made, at most ${attemptLimit(entry, ctx.options.maxAttempts)} allowed`);
  }
  if (stop.aborted) return handBack(ctx, lease, entry, made);
  try {
    return await ctx.queue.startAttempt(lease, randomUUID());
  } catch (error) {
    if (isLeaseRefusal(error)) return new Report('lost', entry, made + 1);
    throw error;
  }
}

function isAttempt(value: Attempt | RunReport): value is Attempt {
  return 'runId' in value;
}

/** Records a run that did not succeed (successOf answered null): abandoned, handed back, or a failed attempt. */
async function record(ctx: RunContext, supervised: Supervised, entry: Entry, attempt: number): Promise<RunReport> {
  const { settled, lease } = supervised;
  if (settled.kind === 'abandoned') return new Report('abandoned', entry, attempt);
  if (supervised.stopped) return handBack(ctx, lease, entry, attempt);
  if (settled.kind === 'error') return fail(ctx, lease, entry, attempt, settled.error, describeFailure(settled.error));
  // A value under the lease, not stopped, that successOf refused: one that is no result.
  const bad = badResult(settled.value)!;
  return fail(ctx, lease, entry, attempt, new Error(bad), bad);
}

/** A succeeded run's close was refused: the lease lost (swallowed), or its result too large (a failed attempt). */
async function closeRefused(ctx: RunContext, lease: Lease, entry: Entry, attempt: number, error: unknown): Promise<RunReport> {
  if (isLeaseRefusal(error)) return new Report('lost', entry, attempt);
  if (!isRunlogError(error, 'InvalidArgument')) throw error;
  const text = `the handler's result could not be recorded (too large?): ${error.message}`;
  return fail(ctx, lease, entry, attempt, new RunlogError('InvalidArgument', text, { cause: error }), text);
}

/** A failed attempt: retried after its backoff, or parked when it was the last allowed. */
async function fail(ctx: RunContext, lease: Lease, entry: Entry, attempt: number, error: unknown, text: string): Promise<RunReport> {
  text = recordableError(text);
  if (attemptsUsedUp(entry, ctx.options.maxAttempts, attempt)) {
    const parked = await park(ctx, lease, entry, attempt, text);
    return new Report(parked.outcome, parked.entry, parked.attempt, error, parked.errorText);
  }
  const delayMs = backoffOf(ctx, attempt);
  try {
    const given = await ctx.queue.yield(lease, { kind: 'retry', error: text, delayMs });
    return new Report(given ? 'retried' : 'lost', entry, attempt, error, text);
  } catch (refusal) {
    if (isLeaseRefusal(refusal)) return new Report('lost', entry, attempt, error, text);
    throw refusal;
  }
}

async function park(ctx: RunContext, lease: Lease, entry: Entry, attempt: number, text: string): Promise<RunReport> {
  text = recordableError(text);
  try {
    await ctx.close(lease, { status: 'failed', error: text });
    return new Report('parked', entry, attempt, undefined, text);
  } catch (error) {
    if (isLeaseRefusal(error)) return new Report('lost', entry, attempt);
    throw error;
  }
}

/**
 * Whether a run would start too late: a quarter of its lease or more after its take was asked
 * for (askedAt). By then its lease may have run out and the entry gone to another worker, which
 * may even have finished it: the answer came late (the process stalled between sending the take
 * and reading its answer: a pause, a long collection, a starved CPU; or a slow network), or the
 * entry waited for a free slot. Such a run is handed back, never started. (The hostile tester:
 * a Worker paused just after its take was committed started the handler 0.4–1.5 s after another
 * worker's close of the entry was acknowledged, 12 of 12; the check was made only for an entry
 * that had waited for a slot.) A run that starts in time is kept from outliving its lease by the
 * lease keeper (lease-keeper.ts).
 */
function tooLateToRun(ctx: RunContext, askedAt: number): boolean {
  return ctx.queue.now() - askedAt >= ctx.options.leaseMs / 4;
}

/** Stopping cut the run short, or it would start too late: give the entry back at once, not as a failure. */
async function handBack(ctx: RunContext, lease: Lease, entry: Entry, attempt: number): Promise<RunReport> {
  try {
    const given = await ctx.queue.yield(lease, { kind: 'defer' });
    return new Report(given ? 'deferred' : 'lost', entry, attempt);
  } catch (error) {
    if (isLeaseRefusal(error)) return new Report('lost', entry, attempt);
    throw error;
  }
}

/** The backoff option's delay; one that throws or answers no whole number of ms is reported, and the retry comes at once. */
function backoffOf(ctx: RunContext, attempt: number): number {
  let ms: unknown;
  try {
    ms = ctx.options.backoff(attempt);
  } catch (error) {
    return badBackoff(ctx, `backoff(${attempt}) threw ${describe(error)}; retrying at once`, error);
  }
  if (typeof ms === 'number' && Number.isSafeInteger(ms) && ms >= 0) return ms;
  catchRejection(ms, () => {}); // an async backoff: reported below; its rejection must not end the process
  return badBackoff(ctx, `backoff(${attempt}) answered ${describe(ms)}, not a whole number of ms >= 0; retrying at once`);
}

function badBackoff(ctx: RunContext, message: string, cause?: unknown): number {
  const error = new RunlogError('InvalidArgument', message, cause === undefined ? {} : { cause });
  ctx.options.onEvent({ type: 'error', error, context: 'backoff' });
  return 0;
}

/** The queue's answer to a late or stale run: the only refusals a worker swallows. */
export function isLeaseRefusal(error: unknown): boolean {
  return isRunlogError(error, 'LeaseNotCurrent') || isRunlogError(error, 'EntryClosed');
}

/** The counters each outcome adds to. */
const COUNTED: Readonly<Record<RunOutcome, readonly CounterName[]>> = {
  succeeded: ['processed', 'succeeded'],
  retried: ['processed', 'retried'],
  parked: ['processed', 'parked'],
  lost: ['leasesLost'],
  deferred: ['deferred'],
  abandoned: ['abandoned'],
};

function count(ctx: RunContext, report: RunReport): void {
  const agent = report.entry.agent;
  for (const name of COUNTED[report.outcome]) ctx.metrics.add(name, agent);
  if (report.error !== undefined && (report.outcome === 'retried' || report.outcome === 'parked')) ctx.metrics.add('failed', agent);
  const event = { type: report.outcome, entryId: report.entry.entryId, agent, attempt: report.attempt };
  ctx.options.onEvent(report.errorText === undefined ? event : { ...event, error: report.errorText });
}
