/**
 * Entry summaries: one per entry, who submitted it for what (tenant, thread, agent, key,
 * metadata), how far it got (attempts, last holder, last error) and how it ended; what
 * `runlog find` searches. Not the queue's view: that one lets closed entries go, this keeps
 * every entry whose submission the log still holds, and when it was pruned. Entries whose
 * Submitted was compacted away are not summarised: nothing would name their agent or thread.
 * The first close counts (Closed, CancelRequested and ThreadDeleted each close an entry, as
 * in the queue's fold); events of another tenant than the submission's are not its own.
 */
import type { Outcome, RunlogEvent } from '../src/events/types.ts';
import { defineProjection } from './projection.ts';

export interface EntrySummary {
  entryId: string;
  partition: number;
  tenant: string;
  thread: string;
  agent: string;
  key: string | null;
  metadata: Record<string, string>;
  submittedAt: number;
  maxAttempts: number;
  attempts: number;
  status: 'open' | 'closed';
  outcome: Outcome | null;
  closedAt: number | null;
  lastError: string | null;
  /** The last worker that held a lease on it. */
  holder: string | null;
  prunedAt: number | null;
}

/** The summaries by entry id. */
export type EntrySummaries = Map<string, EntrySummary>;

export const entrySummaries = defineProjection<EntrySummaries>({
  name: 'entry-summaries',
  initial: () => new Map(),
  evolve: (summaries, event, { partition }) => (apply(summaries, partition, event), summaries),
});

function apply(summaries: EntrySummaries, partition: number, event: RunlogEvent): void {
  const mark = (entryId: string, change: (summary: EntrySummary) => void): void => {
    const summary = summaries.get(entryId);
    if (summary !== undefined) change(summary);
  };
  if (event.type === 'Submitted') {
    summaries.set(event.entryId, {
      entryId: event.entryId,
      partition,
      tenant: event.tenant,
      thread: event.thread,
      agent: event.agent,
      key: event.key,
      metadata: { ...event.metadata },
      submittedAt: event.at,
      maxAttempts: event.maxAttempts,
      attempts: 0,
      status: 'open',
      outcome: null,
      closedAt: null,
      lastError: null,
      holder: null,
      prunedAt: null,
    });
    return;
  }
  if (event.type === 'EntriesPruned') {
    for (const id of event.entryIds) mark(id, (summary) => (summary.prunedAt = event.at));
    return;
  }
  if (event.entryId !== null) mark(event.entryId, (summary) => step(summary, event));
}

function step(summary: EntrySummary, event: RunlogEvent): void {
  if (event.type === 'CommandAnswered' || event.tenant !== summary.tenant || summary.status === 'closed') return;
  switch (event.type) {
    case 'Leased':
      summary.holder = event.holder;
      break;
    case 'AttemptStarted':
      summary.attempts = Math.max(summary.attempts, event.attempt);
      break;
    case 'Yielded':
      if (event.error !== null) summary.lastError = event.error;
      break;
    case 'Closed':
      close(summary, event.outcome, event.at, event.error);
      break;
    case 'CancelRequested':
      close(summary, 'cancelled', event.at, null);
      break;
    case 'ThreadDeleted':
      close(summary, 'threadDeleted', event.at, null);
      break;
  }
}

/** Closed, CancelRequested and ThreadDeleted each close an entry (the queue's fold too); the first one counts. */
function close(summary: EntrySummary, outcome: Outcome, at: number, error: string | null): void {
  summary.status = 'closed';
  summary.outcome = outcome;
  summary.closedAt = at;
  if (error !== null) summary.lastError = error;
}
