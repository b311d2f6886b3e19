/**
 * A PartitionView as a snapshot's state (src/events/snapshot-types.ts) and back. The open
 * part (open entries, submission keys, answers) is open-snapshot.ts; the closed part, the
 * ticket index's columns, is here.
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
import type { StateToWrite } from '../src/events/snapshot-codec.ts';
import type { PartitionState } from '../src/events/snapshot-types.ts';
import {
  answersOf,
  openThreadsOf,
  openThreadsToWrite,
  restoreAnswers,
  restoreOpenEntries,
  restoreSubmissionKeys,
  submissionKeysOf,
} from './open-snapshot.ts';
import { PartitionView } from './partition-view.ts';
import { storedColumns, toSnapshotColumns } from './snapshot-columns.ts';
import { OpenThreadsWriting } from './open-threads-writing.ts';
import { ClosedColumnsWriting } from './ticket-columns-writer.ts';
import { TicketIndex, type StoredTicketColumns } from './ticket-index.ts';

/** The state a snapshot of `view` keeps. Reads the view in this turn: call it while no append is in flight. */
export function viewState(view: PartitionView): PartitionState {
  return { ...stateBesideThreads(view), threads: openThreadsOf(view) };
}

/** The same, to encode: its open entries written straight from the view (open-snapshot.ts). Encode it in this turn. */
export function viewStateToWrite(view: PartitionView): StateToWrite {
  return { ...stateBesideThreads(view), threads: openThreadsToWrite(view) };
}

/**
 * The same, but for the open entries and the ticket index's columns, which `threads` and
 * `columns` write a stretch at a time (open-threads-writing.ts, ticket-columns-writer.ts), the
 * view going on meanwhile: the state is what the view holds now. Write the threads' stretches
 * first, then encode the state, then fill the columns; release both after, whatever happens.
 */
export function viewStateToWriteInStretches(view: PartitionView): {
  state: StateToWrite;
  threads: OpenThreadsWriting;
  columns: ClosedColumnsWriting;
} {
  const columns = new ClosedColumnsWriting(view.closed.index);
  let threads: OpenThreadsWriting | undefined;
  try {
    threads = new OpenThreadsWriting(view);
    return { state: { ...stateBesideClosed(view), closedEntries: [], closedIndex: columns, threads }, threads, columns };
  } catch (error) {
    threads?.release();
    columns.release();
    throw error;
  }
}

function stateBesideThreads(view: PartitionView): Omit<PartitionState, 'threads'> {
  return { ...stateBesideClosed(view), ...closedPart(view) };
}

function stateBesideClosed(view: PartitionView): Omit<PartitionState, 'threads' | 'closedEntries' | 'closedIndex'> {
  const secret = view.ticketKey?.secret;
  return {
    lastAt: view.lastAt,
    issuedThrough: view.issuedThrough,
    ticketKey: view.ticketKey === null ? null : { secret: secret!, legacyThrough: view.ticketKey.legacyThrough },
    metrics: { ...view.metrics },
    submissionKeys: submissionKeysOf(view),
    answers: answersOf(view),
  };
}

/**
 * A view of `partition` holding what `state` says, having folded every record below `nextOffset`.
 * `closedColumns`: the ticket index's columns when they are read from where they lie
 * (snapshot-columns.ts sourcedColumns; state.closedIndex is then empty); the state may then
 * come as the function that decodes it (see below). `tables` 'later': the ticket index is loaded
 * without its tables, which the caller hands it (TicketIndex.adoptTables) before the view is used.
 */
export function restoreView(
  partition: number,
  stateOrDecode: PartitionState | (() => PartitionState),
  nextOffset: bigint,
  closedColumns?: StoredTicketColumns,
  tables: 'fill' | 'later' = 'fill',
): PartitionView {
  const view = new PartitionView(partition);
  // The closed tickets first, and, when they come as columns, before the rest of the state is
  // even decoded (`stateOrDecode` a function: snapshot-stream.ts walkSnapshotState): their
  // index's arrays are most of what a restore allocates, and fresh array memory brings full
  // collections on (one per 64 MB or so), each marking the whole heap: made first, they mark
  // a heap without the open entries, decoded or restored.
  if (closedColumns !== undefined) loadClosedIndex(view, closedColumns, nextOffset, tables);
  const state = typeof stateOrDecode === 'function' ? stateOrDecode() : stateOrDecode;
  restoreClosed(view, state, nextOffset, closedColumns !== undefined);
  restoreOpenEntries(view, state.threads);
  restoreAnswers(view, state.answers);
  restoreSubmissionKeys(view, state.submissionKeys);
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

/** `loaded`: the index was loaded from columns read where they lie (loadClosedIndex; state.closedIndex is then empty). */
function restoreClosed(view: PartitionView, state: PartitionState, nextOffset: bigint, loaded: boolean): void {
  if (!loaded && state.closedIndex.length > 0) loadClosedIndex(view, storedColumns(state.closedIndex), nextOffset);
  // Closed entries kept whole (a snapshot from before the ticket index) say nothing of where their records lie.
  if (state.closedEntries.length > 0) throw new Error("the snapshot keeps closed entries whole, without their records' offsets");
}

/** Loaded straight from the snapshot's bytes or file (no column copied out first), checked as it is loaded: no record past what it covers. */
function loadClosedIndex(view: PartitionView, columns: StoredTicketColumns, nextOffset: bigint, tables: 'fill' | 'later' = 'fill'): void {
  if (Object.keys(columns).length > 0) view.closed.index = TicketIndex.fromColumns(columns, Number(nextOffset), tables);
}
