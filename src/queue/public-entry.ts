/**
 * The public shape of an entry and its lease, built from the fold's EntryState for a caller.
 * The view's entries are mutable and owned by the fold: callers only ever get these copies.
 * They are plain objects made by plain constructors, not literals: a Worker's handler holds
 * them as long as it runs, so a literal making them would be pretenured by slow handlers and
 * then make every later copy in the old generation (src/plain-objects.ts).
 */
import type { ClosedEntry } from '../../projections/closed-entry.ts';
import { StartedAttempt, type EntryState, type LeaseState } from '../../projections/entry-state.ts';
import { plainConstructor } from '../plain-objects.ts';
import type { AttemptStarted } from '../events/types.ts';
import type { Attempt, Entry, Lease, Started, Taken } from './types.ts';

/** An entry as the queue holds it: open in the view, or closed (held, cached or read back). */
export type HeldEntry = EntryState | ClosedEntry;

export function leaseOf(entry: HeldEntry): Lease | null {
  const lease = entry.lease;
  return lease === null ? null : new PublicLease(entry, lease);
}

const PublicLease = plainConstructor(function (this: Lease, entry: HeldEntry, lease: LeaseState) {
  this.tenant = entry.tenant;
  this.thread = entry.thread;
  this.entryId = entry.entryId;
  this.agent = entry.agent;
  this.holder = lease.holder;
  this.epoch = lease.epoch;
  this.expiresAt = lease.expiresAt;
});

/**
 * A copy of the entry for a caller: nothing in it aliases the view (input, result,
 * metadata, attempts and lease are built fresh), so whatever the caller does with it
 * changes neither the view nor what replay gives.
 */
export function toPublicEntry(entry: HeldEntry): Entry {
  return new PublicEntry(entry);
}

const PublicEntry = plainConstructor(function (this: Entry, entry: HeldEntry) {
  this.entryId = entry.entryId;
  this.tenant = entry.tenant;
  this.thread = entry.thread;
  this.agent = entry.agent;
  this.input = copyBytes(entry.input);
  this.key = entry.key;
  this.priority = entry.priority;
  this.notBefore = entry.notBefore;
  this.deadline = entry.deadline;
  this.maxAttempts = entry.maxAttempts;
  this.metadata = copyMetadata(entry.metadata);
  this.submittedAt = entry.submittedAt;
  this.status = entry.closed ? 'closed' : 'open';
  this.lease = leaseOf(entry);
  this.attempts = entry.attempts.length === 0 ? [] : entry.attempts.map(copyAttempt);
  this.deferredAttempts = entry.deferredAttempts;
  this.outcome = entry.outcome;
  this.result = entry.result === null ? null : copyBytes(entry.result);
  this.error = entry.error;
  this.closedAt = entry.closedAt;
});

/** Field by field, a fresh object made as the view makes its own: a spread of the view's attempt costs several times as much (every answered entry makes these). */
function copyAttempt(attempt: Attempt): Attempt {
  return new StartedAttempt(attempt.runId, attempt.attempt, attempt.epoch, attempt.startedAt);
}

/** The attempt an AttemptStarted event starts, for a caller. */
export function attemptOf(event: AttemptStarted): Attempt {
  return new StartedAttempt(event.runId, event.attempt, event.epoch, event.at);
}

/** What take answers for an entry whose lease it has just folded (so the lease is there). */
export const TakenAnswer = plainConstructor(function (this: Taken, entry: HeldEntry) {
  this.lease = leaseOf(entry)!;
  this.entry = toPublicEntry(entry);
});

/** What takeStarted answers for an entry whose lease (and attempt, unless null) it has just folded. */
export const StartedAnswer = plainConstructor(function (this: Started, entry: HeldEntry, attempt: Attempt | null) {
  this.lease = leaseOf(entry)!;
  this.entry = toPublicEntry(entry);
  this.attempt = attempt;
});

/** A fresh object (the caller's to change); most entries have no metadata, whose spread costs more than `{}`. */
function copyMetadata(metadata: Record<string, string>): Record<string, string> {
  for (const _ in metadata) return { ...metadata };
  return {};
}

/**
 * `new Uint8Array(n)` then `set`, not Uint8Array.from: only the former keeps a small copy's
 * bytes on V8's heap (no native backing store per answer; see src/validation/bytes.ts).
 */
function copyBytes(bytes: Uint8Array): Uint8Array {
  const copy = new Uint8Array(bytes.length);
  copy.set(bytes);
  return copy;
}

/** An entry's JSON beyond what answerBytesOf counts field by field: names, numbers, punctuation. */
const ENTRY_JSON_BYTES = 1024;
/** An attempt's JSON (its run id, numbers, names). */
const ATTEMPT_JSON_BYTES = 256;
/** The most a UTF-16 unit of text takes in JSON (`\u0001`): text is counted at its worst. */
const ESCAPED_UNIT_BYTES = 6;

/**
 * At most how many bytes `entry` takes in an answer (over HTTP, as JSON: bytes in base64, text
 * escaped at its worst), closed with a result of `resultBytes` (null: the result it holds),
 * with `moreTextUnits` UTF-16 units of text besides (a close's error, a take's lease):
 * what MAX_ANSWER_BYTES bounds (requests.ts). An upper bound, never less than the answer:
 * metadata of control characters, escaped six to one, passed the bound when only inputs were
 * counted (the second tester: a takeStarted of 10,000 entries with 16 KiB of such metadata
 * failed to answer after its leases were durable).
 */
export function answerBytesOf(entry: EntryState, resultBytes: number | null = null, moreTextUnits = 0): number {
  const text =
    moreTextUnits +
    entry.entryId.length +
    entry.tenant.length +
    entry.thread.length +
    entry.agent.length +
    (entry.key?.length ?? 0) +
    (entry.error?.length ?? 0) +
    (entry.lease?.holder.length ?? 0);
  let bytes = ENTRY_JSON_BYTES + base64Bytes(entry.inputLength) + base64Bytes(resultBytes ?? entry.result?.length ?? 0);
  bytes += ESCAPED_UNIT_BYTES * text + ATTEMPT_JSON_BYTES * entry.attempts.length;
  const metadata = entry.metadata;
  for (const name in metadata) bytes += ESCAPED_UNIT_BYTES * (name.length + metadata[name]!.length);
  return bytes;
}

/** At most how many bytes `entry` takes in a takeStarted answer, leased to `holder`: its lease repeats its names, with the holder's (twice: the attempt's lease too). */
export function startedAnswerBytesOf(entry: EntryState, holder: string): number {
  const leaseText = 2 * holder.length + entry.entryId.length + entry.tenant.length + entry.thread.length + entry.agent.length;
  return answerBytesOf(entry, null, leaseText);
}

function base64Bytes(bytes: number): number {
  return 4 * Math.ceil(bytes / 3);
}
