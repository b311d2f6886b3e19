/**
 * One entry as the view holds it. Mutable, owned by the fold; callers get copies
 * (`toPublicEntry`). `version` changes on every change that moves the entry in or out
 * of the head index, so stale index items can be recognised and skipped.
 */
import type { Outcome, Submitted } from '../src/events/types.ts';
import type { Attempt, Entry, Lease } from '../src/queue/types.ts';
import type { HeadIndex } from './head-index.ts';
import type { ThreadState } from './thread-state.ts';

/** Shared by every entry without metadata or attempts (frozen: a stray write throws). */
const NO_METADATA: Record<string, string> = Object.freeze({});
const NO_ATTEMPTS: Attempt[] = Object.freeze([]) as unknown as Attempt[];

export interface LeaseState {
  holder: string;
  epoch: number;
  expiresAt: number;
}

export interface EntryState {
  readonly entryId: string;
  readonly seq: number;
  readonly tenant: string;
  readonly thread: string;
  /** The entry's thread in the view (saves building its id to look it up). */
  readonly threadState: ThreadState;
  readonly agent: string;
  /** The head index of the entry's agent (saves a lookup by agent per lease and yield). */
  readonly heads: HeadIndex;
  readonly input: Uint8Array;
  readonly key: string | null;
  readonly priority: number;
  readonly deadline: number | null;
  readonly maxAttempts: number;
  readonly metadata: Record<string, string>;
  readonly submittedAt: number;
  /** Not takeable before this time (submission's notBefore or a retry's backoff). */
  notBefore: number | null;
  lease: LeaseState | null;
  /** Highest lease epoch ever granted; the next lease gets lastEpoch + 1. */
  lastEpoch: number;
  /** Grown by addAttempt only: entries without attempts share one frozen array. */
  attempts: readonly Attempt[];
  /** Attempts handed back unfinished (defer after startAttempt); they do not count toward maxAttempts. */
  deferredAttempts: number;
  closed: boolean;
  outcome: Outcome | null;
  result: Uint8Array | null;
  error: string | null;
  closedAt: number | null;
  version: number;
}

/**
 * A new entry of `thread`, indexed in `heads` when it is a head. It takes the thread's
 * tenant and thread strings and the index's agent string (one copy each, not per entry).
 */
export function entryFromSubmitted(event: Submitted, thread: ThreadState, heads: HeadIndex): EntryState {
  return {
    entryId: event.entryId,
    seq: event.seq,
    tenant: thread.tenant,
    thread: thread.thread,
    threadState: thread,
    agent: heads.agent,
    heads,
    input: event.input,
    key: event.key,
    priority: event.priority,
    deadline: event.deadline,
    maxAttempts: event.maxAttempts,
    metadata: isEmpty(event.metadata) ? NO_METADATA : event.metadata,
    submittedAt: event.at,
    notBefore: event.notBefore,
    lease: null,
    lastEpoch: 0,
    attempts: NO_ATTEMPTS,
    deferredAttempts: 0,
    closed: false,
    outcome: null,
    result: null,
    error: null,
    closedAt: null,
    version: 0,
  };
}

function isEmpty(record: Record<string, string>): boolean {
  for (const _ in record) return false;
  return true;
}

export function addAttempt(entry: EntryState, attempt: Attempt): void {
  if (entry.attempts === NO_ATTEMPTS) entry.attempts = [attempt];
  else (entry.attempts as Attempt[]).push(attempt);
}

export function leaseOf(entry: EntryState): Lease | null {
  const lease = entry.lease;
  if (lease === null) return null;
  return {
    tenant: entry.tenant,
    thread: entry.thread,
    entryId: entry.entryId,
    agent: entry.agent,
    holder: lease.holder,
    epoch: lease.epoch,
    expiresAt: lease.expiresAt,
  };
}

/** True when `entry` is open, leased at `epoch` by `holder`, and the lease has not expired at `now`. */
export function isCurrentLease(entry: EntryState, holder: string, epoch: number, now: number): boolean {
  const lease = entry.lease;
  return !entry.closed && lease !== null && lease.epoch === epoch && lease.holder === holder && lease.expiresAt > now;
}

export function toPublicEntry(entry: EntryState): Entry {
  return {
    entryId: entry.entryId,
    tenant: entry.tenant,
    thread: entry.thread,
    agent: entry.agent,
    input: entry.input,
    key: entry.key,
    priority: entry.priority,
    notBefore: entry.notBefore,
    deadline: entry.deadline,
    maxAttempts: entry.maxAttempts,
    metadata: { ...entry.metadata },
    submittedAt: entry.submittedAt,
    status: entry.closed ? 'closed' : 'open',
    lease: leaseOf(entry),
    attempts: entry.attempts.map((attempt) => ({ ...attempt })),
    deferredAttempts: entry.deferredAttempts,
    outcome: entry.outcome,
    result: entry.result,
    error: entry.error,
    closedAt: entry.closedAt,
  };
}
