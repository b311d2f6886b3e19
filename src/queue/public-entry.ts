/**
 * The public shape of an entry and its lease, built from the fold's EntryState for a caller.
 * The view's entries are mutable and owned by the fold: callers only ever get these copies.
 */
import type { ClosedEntry } from '../../projections/closed-entry.ts';
import type { EntryState } from '../../projections/entry-state.ts';
import type { Attempt, Entry, Lease } from './types.ts';

/** An entry as the queue holds it: open in the view, or closed (held, cached or read back). */
export type HeldEntry = EntryState | ClosedEntry;

export function leaseOf(entry: HeldEntry): Lease | null {
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

/**
 * A copy of the entry for a caller: nothing in it aliases the view (input, result,
 * metadata, attempts and lease are built fresh), so whatever the caller does with it
 * changes neither the view nor what replay gives.
 */
export function toPublicEntry(entry: HeldEntry): Entry {
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
    metadata: copyMetadata(entry.metadata),
    submittedAt: entry.submittedAt,
    status: entry.closed ? 'closed' : 'open',
    lease: leaseOf(entry),
    attempts: entry.attempts.length === 0 ? [] : entry.attempts.map(copyAttempt),
    deferredAttempts: entry.deferredAttempts,
    outcome: entry.outcome,
    result: entry.result === null ? null : copyBytes(entry.result),
    error: entry.error,
    closedAt: entry.closedAt,
  };
}

/** Field by field: a spread of the view's attempt costs several times as much (every answered entry makes these). */
function copyAttempt(attempt: Attempt): Attempt {
  return { runId: attempt.runId, attempt: attempt.attempt, epoch: attempt.epoch, startedAt: attempt.startedAt };
}

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
