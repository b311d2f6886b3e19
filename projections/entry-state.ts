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

/**
 * Fields are what the events say; the tenant, thread and agent strings are read through
 * the entry's thread and head index (shared, not a copy per entry), and `closed` from the
 * outcome: a replay holds every entry of the log, so each field saved counts.
 */
export class EntryState {
  readonly entryId: string;
  readonly seq: number;
  /** The entry's thread in the view (saves building its id to look it up). */
  readonly threadState: ThreadState;
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
  lease: LeaseState | null = null;
  /** Highest lease epoch ever granted; the next lease gets lastEpoch + 1. */
  lastEpoch = 0;
  /** Grown by addAttempt only: entries without attempts share one frozen array. */
  attempts: readonly Attempt[] = NO_ATTEMPTS;
  /** Attempts handed back unfinished (defer after startAttempt); they do not count toward maxAttempts. */
  deferredAttempts = 0;
  /** Set when the entry closes, never cleared: an entry is closed once it has an outcome. */
  outcome: Outcome | null = null;
  result: Uint8Array | null = null;
  error: string | null = null;
  closedAt: number | null = null;
  version = 0;

  /** A new entry of `thread`, indexed in `heads` when it is a head. */
  constructor(event: Submitted, thread: ThreadState, heads: HeadIndex) {
    this.entryId = event.entryId;
    this.seq = event.seq;
    this.threadState = thread;
    this.heads = heads;
    this.input = event.input;
    this.key = event.key;
    this.priority = event.priority;
    this.deadline = event.deadline;
    this.maxAttempts = event.maxAttempts;
    this.metadata = isEmpty(event.metadata) ? NO_METADATA : event.metadata;
    this.submittedAt = event.at;
    this.notBefore = event.notBefore;
  }

  get tenant(): string {
    return this.threadState.tenant;
  }

  get thread(): string {
    return this.threadState.thread;
  }

  get agent(): string {
    return this.heads.agent;
  }

  get closed(): boolean {
    return this.outcome !== null;
  }
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

/**
 * A copy of the entry for a caller: nothing in it aliases the view (input, result,
 * metadata, attempts and lease are built fresh), so whatever the caller does with it
 * changes neither the view nor what replay gives.
 */
export function toPublicEntry(entry: EntryState): Entry {
  return {
    entryId: entry.entryId,
    tenant: entry.tenant,
    thread: entry.thread,
    agent: entry.agent,
    input: copyBytes(entry.input),
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
    result: entry.result === null ? null : copyBytes(entry.result),
    error: entry.error,
    closedAt: entry.closedAt,
  };
}

/**
 * `new Uint8Array(n)` then `set`, not Uint8Array.from: only the former keeps a small copy's
 * bytes on V8's heap (no native backing store per answer; see src/validation/checks.ts).
 */
function copyBytes(bytes: Uint8Array): Uint8Array {
  const copy = new Uint8Array(bytes.length);
  copy.set(bytes);
  return copy;
}
