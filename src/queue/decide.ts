/**
 * Every rule of the queue, in one place: `decide(view, command, now)` answers a command
 * (commands.ts) with the events to append, nothing, or a refusal (a RunlogError as a value;
 * the shell throws it). One case per command below; the rules the shell, the worker or an
 * index also need are named predicates exported from here. Nothing here does I/O or reads a
 * clock; the shell (partition.ts, Partition.run) loads the view, asks, folds and appends.
 *
 * Longer than ~300 lines on purpose: one file is where a newcomer finds the rule for X.
 */
import { RunlogError } from '../errors.ts';
import { describe } from '../validation/index.ts';
import { submissionKeyId } from '../../projections/closed-tickets.ts';
import type {
  AnsweredCommand,
  AttemptStarted,
  Closed,
  CommandAnswered,
  EntriesPruned,
  Leased,
  RunlogEvent,
  Submitted,
  TicketKeyCreated,
  Yielded,
} from '../events/types.ts';
import type { ClosedEntry } from '../../projections/closed-entry.ts';
import { EntryState } from '../../projections/entry-state.ts';
import type { ClosedTicket, PartitionView } from '../../projections/partition-view.ts';
import type {
  Append,
  Command,
  CommandOf,
  Decision,
  DecisionOf,
  Decisions,
  ExpiredInstead,
  Leasing,
  OpenCounts,
  ReadFirst,
  Refused,
  SubmissionFields,
  Unchanged,
} from './commands.ts';
import { formatEntryId, wasIssued } from './entry-id.ts';
import type { Capacity, Entry, Lease } from './types.ts';

const NONE = Object.freeze([]) as never[];
const UNCHANGED: Unchanged = Object.freeze({ kind: 'unchanged', events: NONE }) as Unchanged;

/**
 * Closed entries whole, by entry id, as far as the shell has them at hand (the view holds
 * only their tickets): a decision needing one that is not at hand is ReadFirst.
 */
export type ClosedReader = (entryId: string) => ClosedEntry | undefined;

export function decide<C extends Command>(
  view: PartitionView,
  command: C,
  now: number,
  closed: ClosedReader = (entryId) => view.unsettledEntry(entryId),
): DecisionOf<C['type']> {
  // Each case's function is typed with its own command's decisions (Decisions[T]); the one cast
  // says the switch picked the case of C's type.
  return decideCommand(view, command, now, closed) as DecisionOf<C['type']>;
}

function decideCommand(view: PartitionView, command: Command, now: number, closed: ClosedReader): Decision {
  switch (command.type) {
    case 'Submit':
      return submit(view, command, now, closed);
    case 'Lease':
      return leaseHead(view, command, now);
    case 'LeaseStart':
      return leaseStart(view, command, now);
    case 'LeaseEntry':
      return leaseEntry(view, command, now);
    case 'Extend':
      return extend(view, command, now);
    case 'StartAttempt':
      return startAttempt(view, command, now, closed);
    case 'Yield':
      return yieldEntry(view, command, now);
    case 'Close':
      return close(view, command, now);
    case 'Cancel':
      return cancel(view, command, now);
    case 'DeleteThread':
      return deleteThread(view, command, now);
    case 'Expire':
      return expire(view, now);
    case 'Prune':
      return prune(view, command, now);
    case 'Answer':
      return answer(view, command, now, closed);
    default:
      return unknownCommand(command);
  }
}

function unknownCommand(command: never): never {
  throw new Error(`decide: unknown command ${JSON.stringify(command)}`);
}

// ---- Submit -------------------------------------------------------------------------------

/**
 * A key already naming an entry answers that entry (SubmissionKeyReused if the work differs);
 * else ThreadBusy (strategy reject, the thread has an open entry), QueueFull (capacity), or a
 * new entry. The partition's first submission also writes its ticket key, in the same append.
 */
function submit(view: PartitionView, command: CommandOf<'Submit'>, now: number, closed: ClosedReader): Decisions['Submit'] {
  const { submission } = command;
  const { tenant, thread, key } = submission;
  if (key !== null) {
    const existing = keyedEntry(view, tenant, thread, key, closed);
    if (existing !== undefined && 'kind' in existing) return existing;
    if (existing !== undefined) return sameSubmission(existing, submission);
  }
  if (submission.strategy === 'reject' && (view.thread(tenant, thread)?.openCount ?? 0) > 0) {
    return refuse('ThreadBusy', `thread ${JSON.stringify(thread)} of tenant ${JSON.stringify(tenant)} has an open entry`);
  }
  const full = capacityRefusal(tenant, command.capacity, command.counts);
  if (full !== null) return full;
  const keyCreated = view.ticketKey === null ? ticketKey(view, command.freshSecret, now) : null;
  const seq = view.issuedThrough + 1;
  const entryId = formatEntryId(view.partition, seq, (view.ticketKey ?? keyCreated!).secret);
  const submitted = submittedEvent(submission, entryId, seq, now);
  return { kind: 'created', events: keyCreated === null ? [submitted] : [keyCreated, submitted], entryId };
}

/**
 * The retained entry `key` names on (tenant, thread), open or closed, or undefined. A closed
 * one is found by the hash of its key (closed-tickets.ts) and checked whole: ReadFirst when
 * a candidate is not at hand.
 */
function keyedEntry(
  view: PartitionView,
  tenant: string,
  thread: string,
  key: string,
  closed: ClosedReader,
): EntryState | ClosedEntry | ReadFirst | undefined {
  const open = view.submissionKeys.get(submissionKeyId(tenant, thread, key));
  if (open !== undefined) return view.entries.get(open)!;
  const { found, missing } = wholeEntries(view.closed.byKey(tenant, thread, key), closed);
  if (missing.length > 0) return { kind: 'read', entryIds: missing };
  return found.find((entry) => entry.tenant === tenant && entry.thread === thread && entry.key === key);
}

/** The closed entries of `tickets` that are at hand, and the ids of those that are not. */
function wholeEntries(tickets: readonly ClosedTicket[], closed: ClosedReader): { found: ClosedEntry[]; missing: string[] } {
  const found: ClosedEntry[] = [];
  const missing: string[] = [];
  for (const ticket of tickets) {
    const entry = closed(ticket.entryId);
    if (entry === undefined) missing.push(ticket.entryId);
    else found.push(entry);
  }
  return { found, missing };
}

/** The Submitted event of `submission` (its fields named one by one: a spread of them costs a submit more). */
function submittedEvent(submission: SubmissionFields, entryId: string, seq: number, at: number): Submitted {
  const { tenant, thread, agent, input, key, strategy, priority, notBefore, deadline, maxAttempts, metadata } = submission;
  return {
    type: 'Submitted',
    tenant,
    thread,
    agent,
    input,
    key,
    strategy,
    priority,
    notBefore,
    deadline,
    maxAttempts,
    metadata,
    entryId,
    seq,
    at,
  };
}

function ticketKey(view: PartitionView, secret: Uint8Array | null, now: number): TicketKeyCreated {
  if (secret === null) throw new Error(`partition ${view.partition} has no ticket key and none was drawn`);
  return { type: 'TicketKeyCreated', tenant: '', thread: '', entryId: '', at: now, secret, legacyThrough: view.issuedThrough };
}

/**
 * What a submission whose key named `entry` when it was called answers, `entry` being gone from the
 * view since (pruned by a command called after it: RunQueue.submit, submitBatch): that entry, or
 * SubmissionKeyReused if the work differs, as `submit` would have decided it then.
 */
export function keyedAnswer(entry: ClosedEntry, submission: SubmissionFields): { entryId: string } | RunlogError {
  const decision = sameSubmission(entry, submission);
  return decision.kind === 'refused' ? decision.error : { entryId: entry.entryId };
}

function sameSubmission(entry: EntryState | ClosedEntry, submission: SubmissionFields): Decisions['Submit'] {
  // Identity is what the work is; timing (notBefore, deadline) and strategy are not part of it,
  // since a client retrying a submission often recomputes them from its own clock.
  const same =
    entry.agent === submission.agent &&
    entry.priority === submission.priority &&
    entry.maxAttempts === submission.maxAttempts &&
    bytesEqual(entry.input, submission.input) &&
    mapsEqual(entry.metadata, submission.metadata);
  if (same) return { kind: 'existing', events: NONE, entryId: entry.entryId };
  const key = JSON.stringify(submission.key);
  return refuse('SubmissionKeyReused', `submission key ${key} already names entry ${entry.entryId} with a different submission`);
}

function capacityRefusal(tenant: string, capacity: Capacity, counts: OpenCounts): Refused | null {
  if (capacity.perTenant !== undefined && counts.tenant >= capacity.perTenant) {
    return refuse('QueueFull', `tenant ${JSON.stringify(tenant)} has ${counts.tenant} open entries, its capacity`);
  }
  if (capacity.total !== undefined && counts.total >= capacity.total) {
    // Nothing about the other tenants: not how many open entries they hold.
    return refuse('QueueFull', 'the queue is full: it holds as many open entries as its total capacity allows');
  }
  return null;
}

// ---- Lease, LeaseEntry --------------------------------------------------------------------

/** A take's lease on the head the router chose: leased, expired instead if overdue, unchanged if not takeable or not asked for. */
function leaseHead(view: PartitionView, command: CommandOf<'Lease'>, now: number): Decisions['Lease'] {
  const entry = view.entries.get(command.entryId);
  if (entry === undefined || !isAskedFor(entry, command.agents, command.tenants) || !isTakeable(view, entry, now)) return UNCHANGED;
  return leaseOrExpire(entry, command.holder, command.ttlMs, now);
}

/**
 * takeStarted: the head leased as by Lease, and an attempt started under the new lease in the
 * same append (the attempt is durable before any handler runs), unless the entry has no
 * attempt left (then leased only: the caller parks it). A run id already used on the thread
 * (a drawn one never is) leaves the entry untaken.
 */
function leaseStart(view: PartitionView, command: CommandOf<'LeaseStart'>, now: number): Decisions['LeaseStart'] {
  const entry = view.entries.get(command.entryId);
  if (entry === undefined || !isAskedFor(entry, command.agents, command.tenants) || !isTakeable(view, entry, now)) return UNCHANGED;
  // Only the open entries' run ids: the shell draws a fresh UUID, which no closed entry has used either.
  if (entry.threadState.runUser(command.runId) !== undefined) return UNCHANGED;
  const leasing = leaseOrExpire(entry, command.holder, command.ttlMs, now);
  if (leasing.kind === 'expired' || attemptsUsedUp(entry, command.attemptCap)) return leasing;
  const [leased] = leasing.events;
  const started: AttemptStarted = {
    type: 'AttemptStarted',
    tenant: entry.tenant,
    thread: entry.thread,
    entryId: entry.entryId,
    at: now,
    runId: command.runId,
    attempt: entry.attempts.length + 1,
    epoch: leased.epoch,
  };
  return { kind: 'started', events: [leased, started] };
}

/** takeEntry: the tenant's entry, if it is a free head now (its notBefore is not waited for). */
function leaseEntry(view: PartitionView, command: CommandOf<'LeaseEntry'>, now: number): Decisions['LeaseEntry'] {
  const entry = lookUp(view, command.tenant, command.entryId);
  if (entry instanceof RunlogError) return { kind: 'refused', error: entry };
  if (!(entry instanceof EntryState) || !isFreeHead(view, entry, now)) return UNCHANGED;
  return leaseOrExpire(entry, command.holder, command.ttlMs, now);
}

function leaseOrExpire(entry: EntryState, holder: string, ttlMs: number, now: number): Leasing | ExpiredInstead {
  if (isOverdue(entry, now)) return { kind: 'expired', events: [expired(entry, now)] };
  const deferredAttempts = entry.deferredAttempts;
  const leased: Leased = {
    type: 'Leased',
    tenant: entry.tenant,
    thread: entry.thread,
    entryId: entry.entryId,
    at: now,
    holder,
    epoch: entry.lastEpoch + 1,
    expiresAt: now + ttlMs,
    deferredAttempts,
  };
  return { kind: 'leased', events: [leased] };
}

/** What a take asks for: an entry of one of its agents and, when it names tenants (not null), of one of them. */
export function isAskedFor(
  entry: { agent: string; tenant: string },
  agents: readonly string[],
  tenants: readonly string[] | null,
): boolean {
  return agents.includes(entry.agent) && (tenants === null || tenants.includes(entry.tenant));
}

/** An open head of its thread that no lease holds at `now`: takeEntry may lease it. */
export function isFreeHead(view: PartitionView, entry: EntryState, now: number): boolean {
  return !entry.closed && view.isHead(entry) && !isLeased(entry, now);
}

/** What take may lease: a free head whose notBefore (delay, retry backoff) has passed. */
export function isTakeable(view: PartitionView, entry: EntryState, now: number): boolean {
  return isFreeHead(view, entry, now) && (entry.notBefore === null || entry.notBefore <= now);
}

/** A lease holds the entry until it expires: at `expiresAt` it no longer does. (The view's entry or a public Entry.) */
export function isLeased(entry: { lease: { expiresAt: number } | null }, now: number): boolean {
  return entry.lease !== null && entry.lease.expiresAt > now;
}

/**
 * An open entry whose start deadline passed before any attempt started: it closes `expired`,
 * never run. A lease does not protect it (a lease is not a start). The view's sweep used to
 * spare a leased entry, and also dropped it from its deadline index, so one whose holder
 * never started it was never swept; a deadline is a start deadline, so this rule is the right one.
 */
export function isOverdue(entry: EntryState, now: number): boolean {
  return !entry.closed && entry.deadline !== null && entry.deadline <= now && entry.attempts.length === 0;
}

function expired(entry: EntryState, now: number): Closed {
  const error = `start deadline ${entry.deadline} passed before the entry started`;
  return {
    type: 'Closed',
    tenant: entry.tenant,
    thread: entry.thread,
    entryId: entry.entryId,
    at: now,
    outcome: 'expired',
    result: null,
    error,
    deferredAttempts: entry.deferredAttempts,
  };
}

// ---- Commands under a lease: Extend, StartAttempt, Yield, Close ---------------------------

/** True when `entry` is open, leased at `epoch` by `holder`, and the lease has not expired at `now`. */
export function isCurrentLease(entry: EntryState, holder: string, epoch: number, now: number): boolean {
  const lease = entry.lease;
  return !entry.closed && lease !== null && lease.epoch === epoch && lease.holder === holder && lease.expiresAt > now;
}

function extend(view: PartitionView, { lease, ttlMs }: CommandOf<'Extend'>, now: number): Decisions['Extend'] {
  const entry = currentEntry(view, lease, now);
  if (entry instanceof RunlogError) return { kind: 'refused', error: entry };
  const { holder, epoch } = lease;
  const deferredAttempts = entry.deferredAttempts;
  return append({
    type: 'LeaseExtended',
    tenant: entry.tenant,
    thread: entry.thread,
    entryId: entry.entryId,
    at: now,
    holder,
    epoch,
    expiresAt: now + ttlMs,
    deferredAttempts,
  });
}

function startAttempt(
  view: PartitionView,
  { lease, runId }: CommandOf<'StartAttempt'>,
  now: number,
  closed: ClosedReader,
): Decisions['StartAttempt'] {
  const entry = currentEntry(view, lease, now);
  if (entry instanceof RunlogError) return { kind: 'refused', error: entry };
  const usedBy = runIdUser(view, entry, runId, closed);
  if (usedBy !== undefined && typeof usedBy !== 'string') return usedBy;
  if (usedBy !== undefined) {
    return refuse('RunIdReused', `run id ${JSON.stringify(runId)} already names a run of entry ${usedBy} on this thread`);
  }
  return append({
    type: 'AttemptStarted',
    tenant: entry.tenant,
    thread: entry.thread,
    entryId: entry.entryId,
    at: now,
    runId,
    attempt: entry.attempts.length + 1,
    epoch: lease.epoch,
  });
}

/**
 * The entry that ran `runId` on `entry`'s thread, or undefined: an open one (its thread's
 * run ids) or a retained closed one (found by a hash, checked whole: ReadFirst when not at hand).
 */
function runIdUser(view: PartitionView, entry: EntryState, runId: string, closed: ClosedReader): string | ReadFirst | undefined {
  const open = entry.threadState.runUser(runId);
  if (open !== undefined) return open;
  const { tenant, thread } = entry;
  const { found, missing } = wholeEntries(view.closed.byRunId(tenant, thread, runId), closed);
  if (missing.length > 0) return { kind: 'read', entryIds: missing };
  const user = found.find((e) => e.tenant === tenant && e.thread === thread && e.attempts.some((a) => a.runId === runId));
  return user?.entryId;
}

/** A stale lease's yield changes nothing (unchanged, no refusal): the entry is someone else's now. */
function yieldEntry(view: PartitionView, { lease, request }: CommandOf<'Yield'>, now: number): Decisions['Yield'] {
  const entry = openEntry(view, lease.tenant, lease.entryId);
  if (entry instanceof RunlogError) return { kind: 'refused', error: entry };
  if (!isCurrentLease(entry, lease.holder, lease.epoch, now)) return UNCHANGED;
  const notBefore = request.delayMs === null || request.delayMs === 0 ? null : now + request.delayMs;
  // A defer after startAttempt hands the attempt back unfinished: it does not count toward maxAttempts.
  const cutShort = request.kind === 'defer' && entry.attempts[entry.attempts.length - 1]?.epoch === lease.epoch;
  const deferredAttempts = entry.deferredAttempts + (cutShort ? 1 : 0);
  const { kind, error } = request;
  const yielded: Yielded = {
    type: 'Yielded',
    tenant: entry.tenant,
    thread: entry.thread,
    entryId: entry.entryId,
    at: now,
    epoch: lease.epoch,
    kind,
    error,
    notBefore,
    deferredAttempts,
  };
  return append(yielded);
}

function close(view: PartitionView, { lease, request }: CommandOf<'Close'>, now: number): Decisions['Close'] {
  const entry = currentEntry(view, lease, now);
  if (entry instanceof RunlogError) return { kind: 'refused', error: entry };
  return append({
    type: 'Closed',
    tenant: entry.tenant,
    thread: entry.thread,
    entryId: entry.entryId,
    at: now,
    outcome: request.outcome,
    result: request.result,
    error: request.error,
    deferredAttempts: entry.deferredAttempts,
  });
}

/** The entry the lease names, if the lease is current; else EntryClosed, LeaseNotCurrent or a lookup's refusal. */
function currentEntry(view: PartitionView, lease: Lease, now: number): EntryState | RunlogError {
  const entry = openEntry(view, lease.tenant, lease.entryId);
  if (entry instanceof RunlogError || isCurrentLease(entry, lease.holder, lease.epoch, now)) return entry;
  const current =
    entry.lease === null ? 'none' : `epoch ${entry.lease.epoch} of ${entry.lease.holder}, expiring at ${entry.lease.expiresAt}`;
  return new RunlogError(
    'LeaseNotCurrent',
    `lease epoch ${lease.epoch} of ${JSON.stringify(lease.holder)} on entry ${entry.entryId} is not current at ${now} (current: ${current})`,
  );
}

// ---- Cancel, DeleteThread -----------------------------------------------------------------

function cancel(view: PartitionView, { tenant, entryId, reason }: CommandOf<'Cancel'>, now: number): Decisions['Cancel'] {
  const entry = openEntry(view, tenant, entryId);
  if (entry instanceof RunlogError) return { kind: 'refused', error: entry };
  return append({
    type: 'CancelRequested',
    tenant: entry.tenant,
    thread: entry.thread,
    entryId: entry.entryId,
    at: now,
    reason,
    deferredAttempts: entry.deferredAttempts,
  });
}

/** Closes every open entry of the thread (none open: unchanged). */
function deleteThread(view: PartitionView, { tenant, thread }: CommandOf<'DeleteThread'>, now: number): Decisions['DeleteThread'] {
  const open = view.thread(tenant, thread)?.openEntries() ?? [];
  if (open.length === 0) return UNCHANGED;
  return {
    kind: 'append',
    events: open.map((entry) => ({
      type: 'ThreadDeleted',
      tenant: entry.tenant,
      thread: entry.thread,
      entryId: entry.entryId,
      at: now,
      deferredAttempts: entry.deferredAttempts,
    })),
  };
}

// ---- Retention: Expire, Prune -------------------------------------------------------------

function expire(view: PartitionView, now: number): Decisions['Expire'] {
  const overdue = view.passedDeadlines(now, isOverdue);
  if (overdue.length === 0) return UNCHANGED;
  return { kind: 'append', events: overdue.map((entry) => expired(entry, now)) };
}

/** A closed entry closed at or before `closedBy` (the store-clock time a ticket lifetime ago) may be pruned. */
export function isPrunable(entry: { closedAt: number | null }, closedBy: number): boolean {
  return entry.closedAt !== null && entry.closedAt <= closedBy;
}

/**
 * Prunes up to `limit` prunable entries, oldest close first, and up to `answerLimit` loose
 * answers last answered by `closedBy` (tombstones only: nothing else records them), in one
 * append (none due: unchanged).
 */
function prune(view: PartitionView, { closedBy, limit, answerLimit }: CommandOf<'Prune'>, now: number): Decisions['Prune'] {
  const due = view.oldestClosed(limit, (entry) => isPrunable(entry, closedBy));
  const tombstones = view.answers.looseDue(closedBy, answerLimit ?? 0);
  if (due.length === 0 && tombstones.length === 0) return UNCHANGED;
  const entryIds = due.map((entry) => entry.entryId);
  const pruned: EntriesPruned = {
    type: 'EntriesPruned',
    tenant: '',
    thread: '',
    entryId: '',
    at: now,
    entryIds,
    issuedThrough: view.issuedThrough,
  };
  return { kind: 'append', events: [pruned], tombstones };
}

// ---- Answer: a request of the commands topic -----------------------------------------------

/**
 * Every request gets exactly one CommandAnswered, in the same append as its events. A request
 * id of the tenant answered before (and not pruned since) gets that first answer again, with
 * created false, and nothing else; else the request's command is decided as through the API,
 * and its refusal (QueueFull, ThreadBusy, TicketNotFound, ... or InvalidArgument for a request
 * the shell could not make a command of) becomes the answer's code and message.
 */
function answer(view: PartitionView, command: CommandOf<'Answer'>, now: number, closed: ClosedReader): Decisions['Answer'] {
  const { requestId, tenant, thread, request } = command;
  const base = { type: 'CommandAnswered', tenant, thread, at: now, requestId } as const;
  const first = view.answers.of(tenant, requestId);
  if (first !== undefined) {
    const { command: kind, entryId, code, message } = first;
    return answered([], { ...base, command: kind, entryId, created: false, code, message });
  }
  if (request.kind === 'invalid') return answered([], refusal(base, request.command, null, request.error));
  if (request.kind === 'submit') {
    const decision = submit(view, request.command, now, closed);
    if (decision.kind === 'read') return decision;
    if (decision.kind === 'refused') return answered([], refusal(base, 'submit', null, decision.error));
    const { entryId } = decision;
    return answered(decision.events, {
      ...base,
      command: 'submit',
      entryId,
      created: decision.kind === 'created',
      code: null,
      message: null,
    });
  }
  const decision = cancel(view, request.command, now);
  const entryId = request.command.entryId;
  if (decision.kind === 'refused') {
    const named = lookUp(view, tenant, entryId) instanceof RunlogError ? null : entryId; // EntryClosed names the tenant's entry
    return answered([], refusal(base, 'cancel', named, decision.error));
  }
  return answered(decision.events, { ...base, command: 'cancel', entryId, created: true, code: null, message: null });
}

function answered(events: RunlogEvent[], answer: CommandAnswered): Decisions['Answer'] {
  return { kind: 'answered', events: [...events, answer], answer };
}

function refusal(
  base: Pick<CommandAnswered, 'type' | 'tenant' | 'thread' | 'at' | 'requestId'>,
  command: AnsweredCommand,
  entryId: string | null,
  error: RunlogError,
): CommandAnswered {
  return { ...base, command, entryId, created: false, code: error.code, message: error.message };
}

// ---- Looking entries up (tenant isolation) ------------------------------------------------

/**
 * The tenant's entry, or the refusal that tells "gone" from "never issued". Another
 * tenant's entry reads exactly as a pruned one does (TicketExpired, the same message).
 */
export function lookUp(view: PartitionView, tenant: string, entryId: string): EntryState | ClosedTicket | RunlogError {
  const entry = view.entries.get(entryId) ?? view.closedTicket(entryId);
  if (entry !== undefined && entry.tenant === tenant) return entry;
  if (entry !== undefined || wasIssued(entryId, view.partition, view)) return expiredTicket(entryId, tenant); // issued: no memory per ticket (entry-id.ts)
  // Worded as partitionOfEntryId words an id of no partition: an unknown id reads the same whatever its shape.
  return new RunlogError('TicketNotFound', `ticket ${describe(entryId)} was never issued`);
}

/** TicketExpired: `entryId` is gone, or not `tenant`'s (the two read the same). */
export function expiredTicket(entryId: string, tenant: string): RunlogError {
  return new RunlogError('TicketExpired', `ticket ${entryId} has expired or is not tenant ${JSON.stringify(tenant)}'s`);
}

/** lookUp for a read: the tenant's open entry or closed ticket (whose entry the shell reads), or the refusal thrown. */
export function findEntry(view: PartitionView, tenant: string, entryId: string): EntryState | ClosedTicket {
  const entry = lookUp(view, tenant, entryId);
  if (entry instanceof RunlogError) throw entry;
  return entry;
}

/** The tenant's entry while it is open: what awaitClosed waits on (another tenant's entry is none of its business). */
export function openEntryOf(view: PartitionView, tenant: string, entryId: string): EntryState | undefined {
  const entry = view.entries.get(entryId);
  return entry !== undefined && entry.tenant === tenant && !entry.closed ? entry : undefined;
}

/** The tenant's open entry, or TicketExpired, TicketNotFound or EntryClosed. */
function openEntry(view: PartitionView, tenant: string, entryId: string): EntryState | RunlogError {
  const entry = lookUp(view, tenant, entryId);
  if (entry instanceof RunlogError || (entry instanceof EntryState && !entry.closed)) return entry;
  return new RunlogError('EntryClosed', `entry ${entry.entryId} is closed (${entry.outcome})`);
}

// ---- What the shell and the worker ask ----------------------------------------------------

/** Events that close an entry: they wake its awaitClosed waiters once durable. */
export function isClosing(event: RunlogEvent): event is Extract<RunlogEvent, { type: 'Closed' | 'CancelRequested' | 'ThreadDeleted' }> {
  return event.type === 'Closed' || event.type === 'CancelRequested' || event.type === 'ThreadDeleted';
}

/** Events after which a worker may find work: a new entry, one given back, or a closed head (the next one is head). */
export function wakesWorkers(event: RunlogEvent): boolean {
  return event.type === 'Submitted' || event.type === 'Yielded' || isClosing(event);
}

/** What the attempt rules read of an entry: the public Entry and the view's EntryState both have it. */
export type AttemptCounts = Pick<Entry, 'maxAttempts' | 'deferredAttempts'> & { attempts: readonly unknown[] };

/** Attempts that count toward the limit: those handed back unfinished (a worker stopping) do not. */
export function countedAttempts(entry: AttemptCounts): number {
  return entry.attempts.length - entry.deferredAttempts;
}

/** The entry's maxAttempts, lowered by a worker's own cap (null: none). */
export function attemptLimit(entry: AttemptCounts, cap: number | null): number {
  return cap === null ? entry.maxAttempts : Math.min(cap, entry.maxAttempts);
}

/** True when `made` counted attempts leave none for another run: the worker parks the entry (closes it failed). */
export function attemptsUsedUp(entry: AttemptCounts, cap: number | null, made = countedAttempts(entry)): boolean {
  return made >= attemptLimit(entry, cap);
}

// ---- Helpers ------------------------------------------------------------------------------

function append<E extends RunlogEvent>(event: E): Append<[E]> {
  return { kind: 'append', events: [event] };
}

function refuse(code: RunlogError['code'], message: string): Refused {
  return { kind: 'refused', error: new RunlogError(code, message) };
}

function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  return a.byteLength === b.byteLength && Buffer.compare(a, b) === 0;
}

function mapsEqual(a: Record<string, string>, b: Record<string, string>): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((key) => a[key] === b[key]);
}
