/**
 * Pure decisions: (view, command, now) -> the events to append, or a refusal (a thrown
 * RunlogError). Nothing here does I/O or reads a clock; the shell (run-queue.ts) loads
 * the view, asks, appends and folds.
 */
import { RunlogError } from '../errors.ts';
import type {
  AttemptStarted,
  CancelRequested,
  Closed,
  EntriesPruned,
  LeaseExtended,
  Leased,
  RunlogEvent,
  Submitted,
  ThreadDeleted,
  TicketKeyCreated,
  Yielded,
} from '../events/types.ts';
import { isCurrentLease, type EntryState } from '../../projections/entry-state.ts';
import { submissionKeyId, threadId, type PartitionView } from '../../projections/partition-view.ts';
import { formatEntryId, parseEntryId, sequenceOf } from './entry-id.ts';
import type { Capacity, Lease } from './types.ts';

/** A submission after validation: every field present. */
export type SubmissionFields = Omit<Submitted, 'type' | 'entryId' | 'seq' | 'at'>;

export interface OpenCounts {
  tenant: number;
  total: number;
}

/** The entry the submission names, and the events to append (none when its key names an existing entry). */
export type SubmitDecision = { entryId: string; events: RunlogEvent[] };

/**
 * `freshSecret`: a new ticket key, drawn by the shell when the partition has none yet; the
 * first submission of a partition writes it (TicketKeyCreated) in the same append.
 */
export function decideSubmit(
  view: PartitionView,
  submission: SubmissionFields,
  now: number,
  capacity: Capacity,
  counts: OpenCounts,
  freshSecret: Uint8Array | null,
): SubmitDecision {
  const { tenant, thread, key } = submission;
  if (key !== null) {
    const existing = view.submissionKeys.get(submissionKeyId(tenant, thread, key));
    if (existing !== undefined) return { entryId: sameSubmission(view.entries.get(existing)!, submission), events: [] };
  }
  if (submission.strategy === 'reject' && (view.thread(tenant, thread)?.openCount ?? 0) > 0) {
    throw new RunlogError('ThreadBusy', `thread ${JSON.stringify(thread)} of tenant ${JSON.stringify(tenant)} has an open entry`);
  }
  requireCapacity(tenant, capacity, counts);
  const keyCreated = view.ticketKey === null ? decideTicketKey(view, freshSecret, now) : null;
  const seq = view.issuedThrough + 1;
  const entryId = formatEntryId(view.partition, seq, (view.ticketKey ?? keyCreated!).secret);
  const submitted: Submitted = { type: 'Submitted', ...submission, entryId, seq, at: now };
  return { entryId, events: keyCreated === null ? [submitted] : [keyCreated, submitted] };
}

function decideTicketKey(view: PartitionView, secret: Uint8Array | null, now: number): TicketKeyCreated {
  if (secret === null) throw new Error(`partition ${view.partition} has no ticket key and none was drawn`);
  return { type: 'TicketKeyCreated', tenant: '', thread: '', entryId: '', at: now, secret, legacyThrough: view.issuedThrough };
}

function sameSubmission(entry: EntryState, submission: SubmissionFields): string {
  // Identity is what the work is; timing (notBefore, deadline) and strategy are not part of it,
  // since a client retrying a submission often recomputes them from its own clock.
  const same =
    entry.agent === submission.agent &&
    entry.priority === submission.priority &&
    entry.maxAttempts === submission.maxAttempts &&
    bytesEqual(entry.input, submission.input) &&
    mapsEqual(entry.metadata, submission.metadata);
  if (!same) {
    throw new RunlogError(
      'SubmissionKeyReused',
      `submission key ${JSON.stringify(submission.key)} already names entry ${entry.entryId} with a different submission`,
    );
  }
  return entry.entryId;
}

function requireCapacity(tenant: string, capacity: Capacity, counts: OpenCounts): void {
  if (capacity.perTenant !== undefined && counts.tenant >= capacity.perTenant) {
    throw new RunlogError('QueueFull', `tenant ${JSON.stringify(tenant)} has ${counts.tenant} open entries, its capacity`);
  }
  if (capacity.total !== undefined && counts.total >= capacity.total) {
    // Nothing about the other tenants: not how many open entries they hold.
    throw new RunlogError('QueueFull', 'the queue is full: it holds as many open entries as its total capacity allows');
  }
}

export function decideLease(entry: EntryState, holder: string, ttlMs: number, now: number): Leased {
  const deferredAttempts = entry.deferredAttempts;
  return { type: 'Leased', ...ids(entry), at: now, holder, epoch: entry.lastEpoch + 1, expiresAt: now + ttlMs, deferredAttempts };
}

/** A head whose start deadline passed before any attempt: closed expired, never run. */
export function isOverdue(entry: EntryState, now: number): boolean {
  return entry.deadline !== null && entry.deadline <= now && entry.attempts.length === 0;
}

export function decideExpire(entry: EntryState, now: number): Closed {
  const error = `start deadline ${entry.deadline} passed before the entry started`;
  return { type: 'Closed', ...ids(entry), at: now, outcome: 'expired', result: null, error };
}

export function decideExtend(view: PartitionView, lease: Lease, ttlMs: number, now: number): LeaseExtended {
  const entry = currentEntry(view, lease, now);
  const { deferredAttempts } = entry;
  return {
    type: 'LeaseExtended',
    ...ids(entry),
    at: now,
    holder: lease.holder,
    epoch: lease.epoch,
    expiresAt: now + ttlMs,
    deferredAttempts,
  };
}

export function decideStartAttempt(view: PartitionView, lease: Lease, runId: string, now: number): AttemptStarted {
  const entry = currentEntry(view, lease, now);
  const usedBy = view.thread(entry.tenant, entry.thread)?.runIds.get(runId);
  if (usedBy !== undefined) {
    throw new RunlogError('RunIdReused', `run id ${JSON.stringify(runId)} already names a run of entry ${usedBy} on this thread`);
  }
  const attempt = entry.attempts.length + 1;
  return { type: 'AttemptStarted', ...ids(entry), at: now, runId, attempt, epoch: lease.epoch };
}

export type YieldFields = Pick<Yielded, 'kind' | 'error'> & { delayMs: number | null };

/** Null when the lease is not current: a stale yield changes nothing. */
export function decideYield(view: PartitionView, lease: Lease, request: YieldFields, now: number): Yielded | null {
  const entry = entryOfLease(view, lease);
  if (!isCurrentLease(entry, lease.holder, lease.epoch, now)) return null;
  const notBefore = request.delayMs === null || request.delayMs === 0 ? null : now + request.delayMs;
  const cutShort = request.kind === 'defer' && entry.attempts[entry.attempts.length - 1]?.epoch === lease.epoch;
  const deferredAttempts = entry.deferredAttempts + (cutShort ? 1 : 0);
  return {
    type: 'Yielded',
    ...ids(entry),
    at: now,
    epoch: lease.epoch,
    kind: request.kind,
    error: request.error,
    notBefore,
    deferredAttempts,
  };
}

export function decideClose(view: PartitionView, lease: Lease, fields: Pick<Closed, 'outcome' | 'result' | 'error'>, now: number): Closed {
  const entry = currentEntry(view, lease, now);
  return { type: 'Closed', ...ids(entry), at: now, ...fields };
}

export function decideCancel(view: PartitionView, tenant: string, entryId: string, reason: string | null, now: number): CancelRequested {
  const entry = findEntry(view, tenant, entryId);
  requireOpen(entry);
  return { type: 'CancelRequested', ...ids(entry), at: now, reason };
}

export function decideDeleteThread(view: PartitionView, tenant: string, thread: string, now: number): ThreadDeleted[] {
  const state = view.threads.get(threadId(tenant, thread));
  return (state?.openEntries() ?? []).map((entry) => ({ type: 'ThreadDeleted', ...ids(entry), at: now }));
}

/** Prunes closed entries closed at or before `closedBy`, oldest first; null when none is due. */
export function decidePrune(view: PartitionView, closedBy: number, limit: number, now: number): EntriesPruned | null {
  const due = view.oldestClosed(limit, (entry) => entry.closedAt! <= closedBy);
  if (due.length === 0) return null;
  const entryIds = due.map((entry) => entry.entryId);
  return { type: 'EntriesPruned', tenant: '', thread: '', entryId: '', at: now, entryIds, issuedThrough: view.issuedThrough };
}

/**
 * The tenant's entry, or the refusal that tells "gone" from "never issued". Another
 * tenant's entry reads exactly as a pruned one does (TicketExpired, the same message).
 */
export function findEntry(view: PartitionView, tenant: string, entryId: string): EntryState {
  const entry = view.entries.get(entryId);
  if (entry !== undefined && entry.tenant === tenant) return entry;
  if (entry !== undefined || wasIssued(view, entryId)) {
    throw new RunlogError('TicketExpired', `ticket ${entryId} has expired or is not tenant ${JSON.stringify(tenant)}'s`);
  }
  throw new RunlogError('TicketNotFound', `ticket ${entryId} was never issued`);
}

/** True when this partition issued `entryId` (see entry-id.ts); needs no memory per ticket. */
function wasIssued(view: PartitionView, entryId: string): boolean {
  const parsed = parseEntryId(entryId, view.partition + 1);
  if (parsed === null || parsed.partition !== view.partition) return false;
  const legacyThrough = view.ticketKey?.legacyThrough ?? view.issuedThrough;
  if (parsed.token === null) return parsed.seq <= legacyThrough;
  const seq = view.ticketKey === null ? null : sequenceOf(parsed.token, view.ticketKey.secret);
  return seq !== null && seq > legacyThrough && seq <= view.issuedThrough;
}

function entryOfLease(view: PartitionView, lease: Lease): EntryState {
  const entry = findEntry(view, lease.tenant, lease.entryId);
  requireOpen(entry);
  return entry;
}

function currentEntry(view: PartitionView, lease: Lease, now: number): EntryState {
  const entry = entryOfLease(view, lease);
  if (!isCurrentLease(entry, lease.holder, lease.epoch, now)) {
    const current =
      entry.lease === null ? 'none' : `epoch ${entry.lease.epoch} of ${entry.lease.holder}, expiring at ${entry.lease.expiresAt}`;
    throw new RunlogError(
      'LeaseNotCurrent',
      `lease epoch ${lease.epoch} of ${JSON.stringify(lease.holder)} on entry ${entry.entryId} is not current at ${now} (current: ${current})`,
    );
  }
  return entry;
}

function requireOpen(entry: EntryState): void {
  if (entry.closed) throw new RunlogError('EntryClosed', `entry ${entry.entryId} is closed (${entry.outcome})`);
}

function ids(entry: EntryState): { tenant: string; thread: string; entryId: string } {
  return { tenant: entry.tenant, thread: entry.thread, entryId: entry.entryId };
}

function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  return a.byteLength === b.byteLength && Buffer.compare(a, b) === 0;
}

function mapsEqual(a: Record<string, string>, b: Record<string, string>): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((key) => a[key] === b[key]);
}
