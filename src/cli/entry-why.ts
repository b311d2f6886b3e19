/**
 * The one-line "why" of an entry's trail: where it ended up and what brought it there,
 * e.g. `closed failed after 10 attempts; last error "SMTP 451"`, read from its events alone.
 */
import type { Outcome, RunlogEvent, Submitted } from '../events/types.ts';
import { formatDuration } from './durations.ts';
import type { HistoryItem } from './entry-trail.ts';
import { formatTimeField } from './output.ts';

/** How the entry closed: a Closed, a CancelRequested (cancelled) or a ThreadDeleted (threadDeleted); the first one counts. */
interface Closing {
  outcome: Outcome;
  at: number;
  error: string | null;
}

interface Facts {
  submitted: Submitted | undefined;
  attempts: number;
  lastError: string | null;
  closed: Closing | undefined;
  /** The last event that set where an open entry stands (a lease, a yield, a cancel request). */
  standing: RunlogEvent | undefined;
  prunedAt: number | null;
}

export function whyLine(items: readonly HistoryItem[]): string {
  const facts = factsOf(items);
  const why = facts.closed === undefined ? openWhy(facts) : closedWhy(facts, facts.closed);
  const compacted = facts.submitted === undefined ? ' (its submission was compacted away)' : '';
  return `${why}${facts.prunedAt === null ? '' : `; pruned ${formatTimeField(facts.prunedAt)}`}${compacted}`;
}

function factsOf(items: readonly HistoryItem[]): Facts {
  const facts: Facts = {
    submitted: undefined,
    attempts: 0,
    lastError: null,
    closed: undefined,
    standing: undefined,
    prunedAt: null,
  };
  for (const { event } of items) {
    if (event.type === 'Submitted') facts.submitted = event;
    else if (event.type === 'AttemptStarted') facts.attempts = Math.max(facts.attempts, event.attempt);
    else if (event.type === 'EntriesPruned') facts.prunedAt = event.at;
    else if (event.type === 'Leased' || event.type === 'LeaseExtended' || event.type === 'Yielded') facts.standing = event;
    facts.closed ??= closingOf(event);
    if ((event.type === 'Yielded' || event.type === 'Closed') && event.error !== null) facts.lastError = event.error;
  }
  return facts;
}

function closingOf(event: RunlogEvent): Closing | undefined {
  if (event.type === 'Closed') return { outcome: event.outcome, at: event.at, error: event.error };
  if (event.type === 'CancelRequested') return { outcome: 'cancelled', at: event.at, error: event.reason };
  if (event.type === 'ThreadDeleted') return { outcome: 'threadDeleted', at: event.at, error: null };
  return undefined;
}

function attemptsText(n: number): string {
  return n === 1 ? '1 attempt' : `${n} attempts`;
}

function closedWhy(facts: Facts, closed: Closing): string {
  const after = `after ${attemptsText(facts.attempts)}`;
  const took = facts.submitted === undefined ? '' : `, ${formatDuration(closed.at - facts.submitted.at)} after submission`;
  const lastError = facts.lastError === null ? '' : `; last error ${JSON.stringify(facts.lastError)}`;
  switch (closed.outcome) {
    case 'succeeded':
      return `closed succeeded ${after}${took}`;
    case 'failed':
      return `closed failed ${after}${took}${lastError}`;
    case 'cancelled':
      return `closed cancelled ${after}${took}${closed.error === null ? '' : `; reason ${JSON.stringify(closed.error)}`}`;
    case 'expired': {
      const deadline = facts.submitted?.deadline;
      const passed =
        deadline === null || deadline === undefined
          ? 'its start deadline passed'
          : `its start deadline ${formatTimeField(deadline)} passed`;
      return `closed expired: ${passed} before it started (${after})${lastError}`;
    }
    case 'threadDeleted':
      return `closed: its thread was deleted (${after})`;
  }
}

function openWhy(facts: Facts): string {
  const max = facts.submitted === undefined ? '' : ` of ${facts.submitted.maxAttempts}`;
  const standing = facts.standing;
  if (standing?.type === 'Leased' || standing?.type === 'LeaseExtended') {
    const running = facts.attempts > 0 ? `attempt ${facts.attempts}${max}` : 'no attempt started yet';
    return `open, leased by ${standing.holder} (epoch ${standing.epoch}) until ${formatTimeField(standing.expiresAt)}; ${running}`;
  }
  if (standing?.type === 'Yielded') {
    const when = standing.notBefore === null ? '' : ` not before ${formatTimeField(standing.notBefore)}`;
    if (standing.kind === 'defer') return `open, deferred by its worker${when}`;
    const error = standing.error === null ? '' : `; last error ${JSON.stringify(standing.error)}`;
    return `open, waiting to retry${when} after ${attemptsText(facts.attempts)}${max}${error}`;
  }
  const agent = facts.submitted === undefined ? '' : ` by a worker of agent ${JSON.stringify(facts.submitted.agent)}`;
  return `open, waiting to be taken${agent}${facts.attempts > 0 ? ` (${attemptsText(facts.attempts)} so far)` : ''}`;
}
