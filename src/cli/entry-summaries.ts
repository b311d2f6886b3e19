/**
 * What `runlog find` searches: one summary per entry, folded from its events (a pure fold,
 * kept here rather than in the queue's view: the view lets closed entries go, the audit
 * keeps every entry whose submission the log still holds). Entries whose Submitted was
 * compacted away are not summarised: nothing would name their agent or thread.
 */
import type { Outcome, RunlogEvent } from '../events/types.ts';

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

export class EntrySummaries {
  readonly byId = new Map<string, EntrySummary>();

  apply(partition: number, event: RunlogEvent): void {
    if (event.type === 'Submitted') {
      this.byId.set(event.entryId, {
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
      for (const id of event.entryIds) this.mark(id, (summary) => (summary.prunedAt = event.at));
      return;
    }
    if (event.entryId !== null) this.mark(event.entryId, (summary) => evolve(summary, event));
  }

  private mark(entryId: string, change: (summary: EntrySummary) => void): void {
    const summary = this.byId.get(entryId);
    if (summary !== undefined) change(summary);
  }
}

function evolve(summary: EntrySummary, event: RunlogEvent): void {
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
