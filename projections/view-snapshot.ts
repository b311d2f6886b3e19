/**
 * A PartitionView as a snapshot's state (src/events/snapshot-types.ts) and back.
 *
 * `viewState` reads the view; `restoreView` builds a view that answers exactly what the
 * original answered, by folding, through the view's own `apply`, events that recreate each
 * entry in its current state (a Submitted, its AttemptStarted records, one Leased or Yielded
 * carrying its lease, epoch and deferrals, then a Closed for a closed one, in close order),
 * and then setting what those synthetic events cannot say: the counters, the submission keys,
 * the answers (owned or loose, in prune order), the ticket key, the latest time and offset.
 * So the view's indexes (heads, deadlines, close order, threads) are built by the same code
 * a replay runs, and a view that changes how it keeps entries restores the same way.
 *
 * What a synthetic event changes beyond the entry (metrics, lastAt) is overwritten after.
 * Closed entries are isolated in `closedPart`/`restoreClosed`: today they are kept whole; a
 * view with a ticket index stores its columns there instead (closedIndex).
 */
import { answerKey } from '../src/events/keys.ts';
import type { PartitionState, SnapshotAnswer, SnapshotClosedEntry, SnapshotEntry, SnapshotThread } from '../src/events/snapshot-types.ts';
import type { CommandAnswered, RunlogEvent, Submitted } from '../src/events/types.ts';
import type { Answer } from './answers.ts';
import type { EntryState } from './entry-state.ts';
import { PartitionView } from './partition-view.ts';

/** The state a snapshot of `view` keeps. Reads the view in this turn: call it while no append is in flight. */
export function viewState(view: PartitionView): PartitionState {
  const threads: SnapshotThread[] = [];
  for (const thread of view.threads.values()) {
    const open = thread.openEntries();
    if (open.length > 0) threads.push({ tenant: thread.tenant, thread: thread.thread, open: open.map(entryOf) });
  }
  const secret = view.ticketKey?.secret;
  return {
    lastAt: view.lastAt,
    issuedThrough: view.issuedThrough,
    ticketKey: view.ticketKey === null ? null : { secret: secret!, legacyThrough: view.ticketKey.legacyThrough },
    metrics: { ...view.metrics },
    threads,
    ...closedPart(view),
    submissionKeys: [...view.submissionKeys].map(([id, entryId]) => ({ id, entryId })),
    answers: answersOf(view),
  };
}

/** A view of `partition` holding what `state` says, having folded every record below `nextOffset`. */
export function restoreView(partition: number, state: PartitionState, nextOffset: bigint): PartitionView {
  const view = new PartitionView(partition);
  for (const { tenant, thread, open } of state.threads) for (const entry of open) restoreEntry(view, tenant, thread, entry);
  restoreClosed(view, state);
  for (const answer of state.answers) view.answers.fold(answeredOf(answer), () => answer.owned);
  view.submissionKeys.clear();
  for (const { id, entryId } of state.submissionKeys) view.submissionKeys.set(id, entryId);
  Object.assign(view.metrics, state.metrics);
  view.issuedThrough = state.issuedThrough;
  view.ticketKey =
    state.ticketKey === null ? null : { secret: state.ticketKey.secret.slice(), legacyThrough: state.ticketKey.legacyThrough };
  view.lastAt = state.lastAt;
  view.appended(nextOffset - 1n);
  return view;
}

// ---- Closed entries: kept whole today (closedEntries); the ticket index's columns later -----

function closedPart(view: PartitionView): Pick<PartitionState, 'closedEntries' | 'closedIndex'> {
  const closed = view.oldestClosed(Number.POSITIVE_INFINITY, () => true);
  const closedEntries = closed.map((entry): SnapshotClosedEntry => ({ tenant: entry.tenant, thread: entry.thread, entry: entryOf(entry) }));
  return { closedEntries, closedIndex: [] };
}

function restoreClosed(view: PartitionView, state: PartitionState): void {
  for (const { tenant, thread, entry } of state.closedEntries) restoreEntry(view, tenant, thread, entry);
  for (const { tenant, thread, entry } of state.closedEntries) {
    const close: RunlogEvent = {
      type: 'Closed',
      tenant,
      thread,
      entryId: entry.entryId,
      at: entry.closedAt!,
      outcome: entry.outcome!,
      result: entry.result,
      error: entry.error,
      deferredAttempts: entry.deferredAttempts,
    };
    view.apply(null, '', close);
  }
}

// ---- Entries ------------------------------------------------------------------------------

function entryOf(entry: EntryState): SnapshotEntry {
  return {
    entryId: entry.entryId,
    seq: entry.seq,
    agent: entry.agent,
    input: entry.input,
    key: entry.key,
    priority: entry.priority,
    deadline: entry.deadline,
    maxAttempts: entry.maxAttempts,
    metadata: entry.metadata,
    submittedAt: entry.submittedAt,
    submittedOffset: -1,
    notBefore: entry.notBefore,
    lease: entry.lease === null ? null : { ...entry.lease },
    lastEpoch: entry.lastEpoch,
    deferredAttempts: entry.deferredAttempts,
    attempts: entry.attempts.map((attempt) => ({ ...attempt, offset: -1 })),
    outcome: entry.outcome,
    result: entry.result,
    error: entry.error,
    closedAt: entry.closedAt,
  };
}

/** Folds the events that bring `entry` (not its close) back: submitted, its attempts, its lease or the yield after its last one. */
function restoreEntry(view: PartitionView, tenant: string, thread: string, entry: SnapshotEntry): void {
  const ids = { tenant, thread, entryId: entry.entryId };
  const submitted: Submitted = {
    type: 'Submitted',
    ...ids,
    at: entry.submittedAt,
    seq: entry.seq,
    agent: entry.agent,
    input: entry.input.slice(), // its own bytes: not a view keeping the whole snapshot alive
    key: entry.key,
    strategy: 'enqueue',
    priority: entry.priority,
    notBefore: entry.notBefore,
    deadline: entry.deadline,
    maxAttempts: entry.maxAttempts,
    metadata: { ...entry.metadata },
  };
  view.apply(null, '', submitted);
  for (const { runId, attempt, epoch, startedAt } of entry.attempts) {
    view.apply(null, '', { type: 'AttemptStarted', ...ids, at: startedAt, runId, attempt, epoch });
  }
  const { lease, lastEpoch, deferredAttempts, notBefore } = entry;
  if (lease === null || lastEpoch > lease.epoch) {
    if (lastEpoch > 0 || deferredAttempts > 0) {
      const at = entry.submittedAt;
      const yielded = { type: 'Yielded', ...ids, at, epoch: lastEpoch, kind: 'defer', error: null, notBefore, deferredAttempts } as const;
      view.apply(null, '', yielded);
    }
  }
  if (lease !== null) view.apply(null, '', { type: 'Leased', ...ids, at: entry.submittedAt, ...lease, deferredAttempts });
}

// ---- Answers ------------------------------------------------------------------------------

/** Owned answers, then the loose ones oldest latest answer first (the order Prune takes them in). */
function answersOf(view: PartitionView): SnapshotAnswer[] {
  const all = view.answers.all();
  const byKey = new Map(all.map((answer) => [answer.key, answer]));
  const loose = view.answers.looseDue(Number.POSITIVE_INFINITY, Number.POSITIVE_INFINITY).map((key) => byKey.get(key)!);
  return [...all.filter((answer) => answer.owner !== null), ...loose].map(snapshotAnswerOf);
}

function snapshotAnswerOf(answer: Answer): SnapshotAnswer {
  const { tenant, requestId } = parseAnswerKey(answer.key);
  const { command, entryId, code, message, at } = answer;
  return { tenant, requestId, command, entryId, code, message, at, owned: answer.owner !== null };
}

/** The tenant and request id answerKey made `key` of (the tenant's '%' and '/' are escaped, so its first '/' ends it). */
function parseAnswerKey(key: string): { tenant: string; requestId: string } {
  const end = key.indexOf('/', 2);
  const tenant = key.slice(2, end).replace(/%2F|%25/g, (escaped) => (escaped === '%2F' ? '/' : '%'));
  const requestId = key.slice(end + 1);
  if (answerKey(tenant, requestId) !== key) throw new Error(`not an answer's key: ${JSON.stringify(key)}`);
  return { tenant, requestId };
}

function answeredOf(answer: SnapshotAnswer): CommandAnswered {
  const { tenant, requestId, command, entryId, code, message, at } = answer;
  return { type: 'CommandAnswered', tenant, thread: '', entryId, at, requestId, command, created: false, code, message };
}
