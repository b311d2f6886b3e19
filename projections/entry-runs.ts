/**
 * An entry's runs, as the shipped projections count them: an attempt runs from its
 * AttemptStarted to the next Yielded, Closed, CancelRequested or ThreadDeleted of its entry;
 * a new lease taken while it ran (the old one expired) ends it at that lease's expiry.
 * Entries are followed from their submission to their close, then forgotten.
 */
import type { Outcome, RunlogEvent } from '../src/events/types.ts';

export interface EntryRun {
  tenant: string;
  agent: string;
  submittedAt: number;
  /** When the running attempt started; null: none is running. */
  startedAt: number | null;
  /** When the current lease expires; null: no lease. */
  expiresAt: number | null;
}

/** What an event did to its entry. */
export interface EntryStep {
  entry: EntryRun;
  /** The run time of an attempt this event ended, or null. */
  ranMs: number | null;
  /** The wait before the entry's first attempt, when this event started it; else null. */
  waitedMs: number | null;
  /** How the entry closed, when this event closed it. */
  closedAs: Outcome | null;
}

/** Follows `event`'s entry in `entries`; null for events about no entry followed. */
export function stepEntry(entries: Map<string, EntryRun>, event: RunlogEvent): EntryStep | null {
  if (event.type === 'Submitted') {
    const entry: EntryRun = { tenant: event.tenant, agent: event.agent, submittedAt: event.at, startedAt: null, expiresAt: null };
    entries.set(event.entryId, entry);
    return { entry, ranMs: null, waitedMs: null, closedAs: null };
  }
  if (event.type === 'EntriesPruned' || event.type === 'TicketKeyCreated' || event.type === 'CommandAnswered') return null;
  const entry = entries.get(event.entryId);
  if (entry === undefined) return null;
  const step: EntryStep = { entry, ranMs: null, waitedMs: null, closedAs: null };
  switch (event.type) {
    case 'Leased':
      if (entry.startedAt !== null) step.ranMs = endRun(entry, Math.min(event.at, entry.expiresAt ?? event.at));
      entry.expiresAt = event.expiresAt;
      break;
    case 'LeaseExtended':
      entry.expiresAt = event.expiresAt;
      break;
    case 'AttemptStarted':
      entry.startedAt = event.at;
      if (event.attempt === 1) step.waitedMs = event.at - entry.submittedAt;
      break;
    case 'Yielded':
      step.ranMs = endRun(entry, event.at);
      entry.expiresAt = null;
      break;
    case 'Closed':
    case 'CancelRequested':
    case 'ThreadDeleted':
      step.ranMs = endRun(entry, event.at);
      step.closedAs = event.type === 'Closed' ? event.outcome : event.type === 'CancelRequested' ? 'cancelled' : 'threadDeleted';
      entries.delete(event.entryId);
      break;
  }
  return step;
}

function endRun(entry: EntryRun, at: number): number | null {
  if (entry.startedAt === null) return null;
  const ranMs = Math.max(0, at - entry.startedAt);
  entry.startedAt = null;
  return ranMs;
}
