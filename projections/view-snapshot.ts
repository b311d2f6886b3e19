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
 * Closed entries are the ticket index's columns (closedIndex, projections/ticket-index.ts),
 * restored as they are; open entries keep where their records lie (the index learns it when
 * they close). A snapshot keeping closed entries whole (closedEntries) is not restored.
 */
import { answerKey } from '../src/events/keys.ts';
import type { PartitionState, SnapshotAnswer, SnapshotEntry, SnapshotThread } from '../src/events/snapshot-types.ts';
import type { CommandAnswered, Submitted } from '../src/events/types.ts';
import type { Answer } from './answers.ts';
import type { EntryState } from './entry-state.ts';
import { submissionOf } from './entry-submission.ts';
import { PartitionView } from './partition-view.ts';
import { storedColumns, toSnapshotColumns } from './snapshot-columns.ts';
import { TicketIndex } from './ticket-index.ts';

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
  restoreClosed(view, state, nextOffset);
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

// ---- Closed entries: the ticket index's columns -------------------------------------------

function closedPart(view: PartitionView): Pick<PartitionState, 'closedEntries' | 'closedIndex'> {
  return { closedEntries: [], closedIndex: toSnapshotColumns(view.closed.index.toColumns()) };
}

function restoreClosed(view: PartitionView, state: PartitionState, nextOffset: bigint): void {
  // Loaded straight from the snapshot's bytes (no column copied out first), checked as it is loaded: no record past what it covers.
  if (state.closedIndex.length > 0) view.closed.index = TicketIndex.fromColumns(storedColumns(state.closedIndex), Number(nextOffset));
  // Closed entries kept whole (a snapshot from before the ticket index) say nothing of where their records lie.
  if (state.closedEntries.length > 0) throw new Error("the snapshot keeps closed entries whole, without their records' offsets");
}

// ---- Entries ------------------------------------------------------------------------------

function entryOf(entry: EntryState): SnapshotEntry {
  return {
    ...submissionOf(entry),
    submittedOffset: entry.submittedOffset,
    notBefore: entry.notBefore,
    lease: entry.lease === null ? null : { ...entry.lease },
    lastEpoch: entry.lastEpoch,
    deferredAttempts: entry.deferredAttempts,
    attempts: entry.attempts.map((attempt, n) => ({ ...attempt, offset: entry.attemptOffsets[n]! })),
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
  // Where its records lie (the ticket index learns them when it closes).
  const restored = view.entries.get(entry.entryId)!;
  restored.submittedOffset = entry.submittedOffset;
  restored.attemptOffsets = entry.attempts.map((attempt) => attempt.offset);
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
