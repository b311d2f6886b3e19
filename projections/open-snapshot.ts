/**
 * The open part of a view's snapshot (view-snapshot.ts puts the parts together): the open
 * entries by thread, the submission keys and the answers, read from a view and folded back
 * into one. Closed entries are the ticket index's columns (view-snapshot.ts).
 *
 * An open entry is restored by folding, through the view's own `apply`, events that recreate
 * it in its current state (a Submitted, its AttemptStarted records, one Leased or Yielded
 * carrying its lease, epoch and deferrals), so the view's indexes (heads, deadlines, threads)
 * are built by the same code a replay runs. What a synthetic event changes beyond the entry
 * (metrics, lastAt) is overwritten after (restoreView). Open entries keep where their records
 * lie (the ticket index learns it when they close).
 */
import { answerKey } from '../src/events/keys.ts';
import type { ThreadsToWrite } from '../src/events/snapshot-codec.ts';
import type { SnapshotAnswer, SnapshotEntry, SnapshotThread } from '../src/events/snapshot-types.ts';
import type { CommandAnswered, Submitted } from '../src/events/types.ts';
import type { Answer } from './answers.ts';
import type { EntryState } from './entry-state.ts';
import { submissionOf } from './entry-submission.ts';
import { writeOpenThreads, type OpenThread } from './open-entries-writer.ts';
import type { PartitionView } from './partition-view.ts';

// ---- Open entries -------------------------------------------------------------------------

/** The view's threads that hold open entries, each with its open entries head first. */
export function openThreadsOf(view: PartitionView): SnapshotThread[] {
  const threads: SnapshotThread[] = [];
  for (const thread of view.threads.values()) {
    const open = thread.openEntries();
    if (open.length > 0) threads.push({ tenant: thread.tenant, thread: thread.thread, open: open.map(entryOf) });
  }
  return threads;
}

/**
 * The same, written straight from the view's entries when encoded (open-entries-writer.ts):
 * no object is built per entry. Read in this turn, like openThreadsOf.
 */
export function openThreadsToWrite(view: PartitionView): ThreadsToWrite {
  const threads: OpenThread[] = [];
  let estimatedBytes = 16;
  for (const thread of view.threads.values()) {
    const open = thread.openEntries();
    if (open.length === 0) continue;
    threads.push({ tenant: thread.tenant, thread: thread.thread, open });
    estimatedBytes += 3 * (thread.tenant.length + thread.thread.length) + 32;
    for (const entry of open) estimatedBytes += estimatedEntryBytes(entry);
  }
  return {
    estimatedBytes,
    writeAvro: (buf, pos) => writeOpenThreads(threads, buf, pos),
    values: () => threads.map(({ tenant, thread, open }) => ({ tenant, thread, open: open.map(entryOf) })),
  };
}

/** About how many bytes an open entry takes in a snapshot (its strings as ASCII; metadata and attempts roughly). */
function estimatedEntryBytes(entry: EntryState): number {
  return 96 + entry.entryId.length + entry.agent.length + entry.inputLength + (entry.key?.length ?? 0) + 64 * entry.attempts.length;
}

/** Folds the open entries of `threads` into `view`. */
export function restoreOpenEntries(view: PartitionView, threads: readonly SnapshotThread[]): void {
  for (const { tenant, thread, open } of threads) for (const entry of open) restoreEntry(view, tenant, thread, entry);
}

/** An open entry as a snapshot's value (avsc writes it; the tools read it). */
export function entryOf(entry: EntryState): SnapshotEntry {
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
  // Set only when it has attempts: an entry that never ran keeps its shared default (entry-state.ts RunState).
  if (entry.attempts.length > 0) restored.attemptOffsets = entry.attempts.map((attempt) => attempt.offset);
}

// ---- Submission keys ----------------------------------------------------------------------

export function submissionKeysOf(view: PartitionView): Array<{ id: string; entryId: string }> {
  return [...view.submissionKeys].map(([id, entryId]) => ({ id, entryId }));
}

export function restoreSubmissionKeys(view: PartitionView, keys: ReadonlyArray<{ id: string; entryId: string }>): void {
  view.submissionKeys.clear();
  for (const { id, entryId } of keys) view.submissionKeys.set(id, entryId);
}

// ---- Answers ------------------------------------------------------------------------------

/** Owned answers, then the loose ones oldest latest answer first (the order Prune takes them in). */
export function answersOf(view: PartitionView): SnapshotAnswer[] {
  const all = view.answers.all();
  const byKey = new Map(all.map((answer) => [answer.key, answer]));
  const loose = view.answers.looseDue(Number.POSITIVE_INFINITY, Number.POSITIVE_INFINITY).map((key) => byKey.get(key)!);
  return [...all.filter((answer) => answer.owner !== null), ...loose].map(snapshotAnswerOf);
}

/** Folds `answers` (as answersOf lists them) into `view`'s answers, owned or loose, in prune order. */
export function restoreAnswers(view: PartitionView, answers: readonly SnapshotAnswer[]): void {
  for (const answer of answers) view.answers.fold(answeredOf(answer), () => answer.owned);
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
