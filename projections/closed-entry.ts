/**
 * A closed entry whole: what entry() answers for it. Closed entries do not stay in the view
 * (ticket-index.ts keeps a row for each); one is built once as it closes (the view holds it
 * until its records are durable; the queue's cache may keep it) or again from its records
 * read back from the log (src/queue/closed-entries.ts). Both give the same fields: the
 * submission's, the attempts', the close's, and deferredAttempts, which the index keeps
 * because the closing record does not carry it.
 */
import type { AttemptStarted, CancelRequested, Closed, Outcome, Submitted, ThreadDeleted } from '../src/events/types.ts';
import { StartedAttempt, type AttemptRecord, type EntryState } from './entry-state.ts';
import { plainConstructor, type Mutable } from '../src/plain-objects.ts';

export type Closing = Closed | CancelRequested | ThreadDeleted;

export interface ClosedEntry {
  readonly entryId: string;
  readonly seq: number;
  readonly tenant: string;
  readonly thread: string;
  readonly agent: string;
  readonly input: Uint8Array;
  readonly key: string | null;
  readonly priority: number;
  readonly deadline: number | null;
  readonly maxAttempts: number;
  readonly metadata: Readonly<Record<string, string>>;
  readonly submittedAt: number;
  /** Cleared by the close. */
  readonly notBefore: null;
  readonly lease: null;
  readonly attempts: readonly AttemptRecord[];
  readonly deferredAttempts: number;
  readonly outcome: Outcome;
  readonly result: Uint8Array | null;
  readonly error: string | null;
  readonly closedAt: number;
  readonly closed: true;
}

/** How a closing event sets the outcome, result and error (the fold's rule, partition-view.ts). */
export function outcomeOf(event: Closing): Pick<ClosedEntry, 'outcome' | 'result' | 'error'> {
  if (event.type === 'CancelRequested') return { outcome: 'cancelled', result: null, error: event.reason };
  if (event.type === 'ThreadDeleted') return { outcome: 'threadDeleted', result: null, error: null };
  return { outcome: event.outcome, result: event.result, error: event.error };
}

/**
 * The entry as the view held it when it closed (its fields are the view's own: it shares the
 * bytes, never changed). A plain constructor, not a literal: the view holds it until its close
 * is durable, and a pretenured literal would keep every closing entry's input and attempts
 * alive through scavenges (src/plain-objects.ts).
 */
export function closedEntryOf(entry: EntryState): ClosedEntry {
  return new ClosedFromView(entry);
}

// Fields written out, not spread from submissionOf: this runs on every close (a spread builds an extra object).
const ClosedFromView = plainConstructor(function (this: Mutable<ClosedEntry>, entry: EntryState) {
  this.entryId = entry.entryId;
  this.seq = entry.seq;
  this.agent = entry.agent;
  this.input = entry.input;
  this.key = entry.key;
  this.priority = entry.priority;
  this.deadline = entry.deadline;
  this.maxAttempts = entry.maxAttempts;
  this.metadata = entry.metadata;
  this.submittedAt = entry.submittedAt;
  this.tenant = entry.tenant;
  this.thread = entry.thread;
  this.notBefore = null;
  this.lease = null;
  this.attempts = entry.attempts;
  this.deferredAttempts = entry.deferredAttempts;
  this.outcome = entry.outcome!;
  this.result = entry.result;
  this.error = entry.error;
  this.closedAt = entry.closedAt!;
  this.closed = true;
});

/** The entry its records describe: its Submitted, its AttemptStarted (attempt 1 first) and its closing record. */
export function closedEntryFromRecords(
  submitted: Submitted,
  attempts: readonly AttemptStarted[],
  closing: Closing,
  deferredAttempts: number,
): ClosedEntry {
  return {
    entryId: submitted.entryId,
    seq: submitted.seq,
    tenant: submitted.tenant,
    thread: submitted.thread,
    agent: submitted.agent,
    input: submitted.input,
    key: submitted.key,
    priority: submitted.priority,
    deadline: submitted.deadline,
    maxAttempts: submitted.maxAttempts,
    metadata: submitted.metadata,
    submittedAt: submitted.at,
    notBefore: null,
    lease: null,
    attempts: attempts.map((a) => new StartedAttempt(a.runId, a.attempt, a.epoch, a.at)),
    deferredAttempts,
    ...outcomeOf(closing),
    closedAt: closing.at,
    closed: true,
  };
}

/** About what a closed entry holds in memory, for the cache's byte bound: its bytes, strings (2 bytes a character) and objects. */
export function closedEntryBytes(entry: ClosedEntry): number {
  let bytes = 400 + entry.input.byteLength + (entry.result?.byteLength ?? 0);
  bytes += 2 * (entry.entryId.length + entry.tenant.length + entry.thread.length + entry.agent.length);
  bytes += 2 * ((entry.key?.length ?? 0) + (entry.error?.length ?? 0));
  const metadata = entry.metadata;
  for (const name in metadata) bytes += 48 + 2 * (name.length + metadata[name]!.length); // no entries array: this runs on every close
  for (const attempt of entry.attempts) bytes += 80 + 2 * attempt.runId.length;
  return bytes;
}
