/**
 * Opening a partition's view from its latest valid snapshot, then replaying only the records
 * after it (catchUp). A snapshot is trusted only when all of these hold; otherwise it is
 * ignored with a warning (RUNLOG_SNAPSHOT_IGNORED) and the next older one tried, down to a
 * replay from offset zero:
 *   - it decodes whole and its checksum matches (a torn or damaged file does not);
 *   - it names this log (another log's, or a log recreated in the same place, does not) and
 *     this partition;
 *   - the offset it covers up to is within the log (a log truncated or replaced is not: such a
 *     snapshot is also removed where the store can, or it would be trusted once the log grew
 *     past it again, over records it never saw);
 *   - no compaction since it was taken may have dropped tombstones it did not see (the
 *     store's staleness rule: the file log's compaction horizon, Kafka's delete.retention.ms);
 *   - where the store keeps an anchor of the last record it covers (the file log), the log's
 *     record there is that record: a snapshot of a copy of this log directory (the same log id)
 *     that went on differently is not (src/log/record-anchor.ts);
 *   - its state builds a view (restoreView) without error.
 */
import {
  decodeSnapshot,
  decodeSnapshotState,
  encodeSnapshot,
  encodeSnapshotState,
  snapshotStateRoom,
  snapshotChecksumInStretches,
} from '../events/snapshot-codec.ts';
import { SNAPSHOT_FORMAT } from '../events/snapshot-types.ts';
import {
  checksumAside,
  readSnapshotHead,
  verifySnapshotChecksum,
  walkSnapshotState,
  type SnapshotSource,
} from '../events/snapshot-stream.ts';
import type { EventLog } from '../log/event-log.ts';
import { recordAnchor } from '../log/record-anchor.ts';
import type { SnapshotStore, StoredSnapshot } from '../log/snapshot-store.ts';
import { PartitionView } from '../../projections/partition-view.ts';
import { sourcedColumns } from '../../projections/snapshot-columns.ts';
import { fillTablesAside, type TablesAside } from '../../projections/table-fill-aside.ts';
import { restoreView, viewStateToWriteInStretches } from '../../projections/view-snapshot.ts';
import type { WarningListener } from '../warnings.ts';
import { catchUp } from './replay.ts';

export const SNAPSHOT_IGNORED = 'RUNLOG_SNAPSHOT_IGNORED';

/** A file snapshot's state at least this large has its checksum computed on another thread (sourcedView). */
export const CHECKSUM_ASIDE_BYTES = 32 << 20;

/** A snapshot covering offsets past the log's end: the log was truncated, or replaced by an older copy of itself. */
class PastTheEnd extends Error {
  constructor(nextOffset: bigint, end: bigint) {
    super(`it covers offsets up to ${nextOffset}, past the log's end ${end} (the log was truncated or replaced)`);
  }
}

/** How a view was opened: from which snapshot (null: none, replayed from zero) and how many records were replayed after it. */
export interface OpenedView {
  view: PartitionView;
  snapshot: string | null;
  replayed: number;
}

/** `partition`'s view: its latest valid snapshot (if the log keeps snapshots) caught up with the records after it. */
export async function openView(log: EventLog, partition: number, warn: WarningListener): Promise<OpenedView> {
  const found = await latestValidSnapshot(log, partition, warn);
  const view = found?.view ?? new PartitionView(partition);
  const replayed = await catchUp(log, partition, view);
  return { view, snapshot: found?.name ?? null, replayed };
}

/** The newest snapshot of `partition` that is valid (see the top), as a view; null when none is. */
export async function latestValidSnapshot(
  log: EventLog,
  partition: number,
  warn: WarningListener,
): Promise<{ view: PartitionView; name: string } | null> {
  const store = log.snapshots;
  if (store === undefined) return null;
  let stored: StoredSnapshot[];
  try {
    stored = await store.list(partition);
  } catch (error) {
    // Snapshots are only ever a shortcut: a place that cannot be listed (a file where the directory should be) is one not taken.
    const why = error instanceof Error ? error.message : String(error);
    warn({ code: SNAPSHOT_IGNORED, message: `ignoring the snapshots of partition ${partition}: they cannot be listed (${why})` });
    return null;
  }
  if (stored.length === 0) return null;
  const now = await logNow(log, partition);
  for (const snapshot of stored) {
    try {
      return { view: await validView(snapshot, now), name: snapshot.name };
    } catch (error) {
      let why = error instanceof Error ? error.message : String(error);
      if (error instanceof PastTheEnd) why += await discardPastTheEnd(store, partition, snapshot.name);
      warn({ code: SNAPSHOT_IGNORED, message: `ignoring the snapshot ${snapshot.name} of partition ${partition}: ${why}` });
    }
  }
  return null;
}

/**
 * Removes a snapshot found past the log's end, where the store can: ignored now, it would be
 * trusted once the log grew past it again, over records it never saw. Answers what its warning adds.
 */
async function discardPastTheEnd(store: SnapshotStore, partition: number, name: string): Promise<string> {
  if (store.discard === undefined) return '';
  try {
    await store.discard(partition, name);
    return '; removed, so that it is not trusted once the log grows past it again';
  } catch (failure) {
    return `; removing it failed (${failure instanceof Error ? failure.message : String(failure)})`;
  }
}

/**
 * The view a stored snapshot of `partition` builds, if it is valid (see the top) for the log
 * as it is now; else throws why not (the caller ignores it).
 */
export async function snapshotView(log: EventLog, partition: number, stored: StoredSnapshot): Promise<PartitionView> {
  return validView(stored, await logNow(log, partition));
}

/** What a snapshot of `partition` is judged against: the log as it is now. */
interface LogNow {
  log: EventLog;
  partition: number;
  logId: string;
  end: bigint;
  stale: (nextOffset: bigint, takenAt: number) => string | null;
}

async function logNow(log: EventLog, partition: number): Promise<LogNow> {
  const store = log.snapshots;
  if (store === undefined) throw new Error(`the ${log.kind} log keeps no snapshots`);
  return { log, partition, logId: store.logId, end: await log.endOffset(partition), stale: await store.staleness(partition) };
}

/** What a snapshot's envelope says of it: the part judged before its state is read. */
interface SnapshotHeadFields {
  logId: string;
  partition: number;
  nextOffset: bigint;
  takenAt: number;
}

/** Throws why `head` (of the snapshot `stored`) is not valid for the log as it is now (see the top); the state is judged after. */
async function judgeHead(head: SnapshotHeadFields, stored: StoredSnapshot, now: LogNow): Promise<void> {
  if (head.logId !== now.logId) throw new Error(`it is a snapshot of another log (${head.logId}, not ${now.logId})`);
  if (head.partition !== now.partition) throw new Error(`it is a snapshot of partition ${head.partition}`);
  if (head.nextOffset > now.end) throw new PastTheEnd(head.nextOffset, now.end);
  const staleness = now.stale(head.nextOffset, head.takenAt);
  if (staleness !== null) throw new Error(`it is stale: ${staleness}`);
  await checkAnchor(now, head.nextOffset, stored.anchor);
}

/** Throws unless the log's record before `nextOffset` has `anchor` (a snapshot with none is not checked). */
async function checkAnchor(now: LogNow, nextOffset: bigint, anchor: string | undefined): Promise<void> {
  if (anchor === undefined || nextOffset === 0n) return;
  const found = await recordAnchor(now.log, now.partition, nextOffset - 1n);
  // None there: a compaction dropped it since (a tombstone, or a record a later one replaced). Nothing to check it against.
  if (found === null || found === anchor) return;
  throw new Error(
    `it was taken after the record at offset ${nextOffset - 1n} with anchor ${anchor}, and the log holds another record there (anchor ${found}): a snapshot of another copy of this log`,
  );
}

async function validView(stored: StoredSnapshot, now: LogNow): Promise<PartitionView> {
  if (stored.open !== undefined) {
    const source = await stored.open();
    try {
      return await sourcedView(source, stored, now);
    } finally {
      await source.close();
    }
  }
  const bytes = await stored.read();
  const snapshot = decodeSnapshot(bytes);
  await judgeHead(snapshot, stored, now);
  const view = restoreView(now.partition, decodeSnapshotState(snapshot.state), snapshot.nextOffset);
  covered.set(view, { nextOffset: snapshot.nextOffset, size: bytes.byteLength });
  return view;
}

/**
 * The same as validView, reading the snapshot where it lies (src/events/snapshot-stream.ts),
 * judged in the same order. A file's checksum is computed on another thread while the state is
 * read and restored: nothing restored is answered until it matches, and when it does not, that
 * is the reason given (whatever else the damaged bytes made fail first).
 */
async function sourcedView(source: SnapshotSource, stored: StoredSnapshot, now: LogNow): Promise<PartitionView> {
  const head = readSnapshotHead(source);
  // A thread of its own only pays for a large state (starting one costs tens of ms; a queue opens its partitions at once).
  const aside = source.fd !== undefined && head.stateLength >= CHECKSUM_ASIDE_BYTES;
  const checked = aside
    ? checksumAside(source as SnapshotSource & { fd: number }, head)
    : Promise.resolve(verifySnapshotChecksum(source, head));
  // The ticket index's tables, filled on another thread while this one loads the index's columns (large ones only).
  let tablesAside: TablesAside | null = null;
  try {
    await judgeHead(head, stored, now);
    const { columns, decode } = walkSnapshotState(source, head);
    tablesAside = source.fd === undefined ? null : fillTablesAside(source.fd, columns);
    const tables = tablesAside === null ? 'fill' : 'later';
    const view = restoreView(now.partition, decode, head.nextOffset, sourcedColumns(columns, source), tables);
    if (tablesAside !== null) view.closed.index.adoptTables(await tablesAside.tables);
    await checked;
    covered.set(view, { nextOffset: head.nextOffset, size: source.size });
    return view;
  } catch (error) {
    await tablesAside?.cancel(); // it reads the file, which the caller closes once this settles
    await checked; // a checksum that does not match is the reason, rather than what the damage broke
    throw error;
  }
}

/** Where each view opened from a snapshot (or last saved in one) stands: the offset its latest snapshot covers up to, and its size. */
const covered = new WeakMap<PartitionView, { nextOffset: bigint; size: number }>();

/** The offset up to which `view`'s latest snapshot covers it (null: none known), so an unchanged view is not saved again. */
export function snapshotCovers(view: PartitionView): bigint | null {
  return covered.get(view)?.nextOffset ?? null;
}

/** The size in bytes of `view`'s latest snapshot, the one it was opened from or last saved in (null: none known). */
export function snapshotSize(view: PartitionView): number | null {
  return covered.get(view)?.size ?? null;
}

/**
 * Takes a snapshot of `view` and saves it; resolves to its size in bytes. The view must have
 * nothing in flight (every event folded is durable, at an offset below view.nextOffset): the
 * snapshot names view.nextOffset as what it covers. What it holds is read in this turn: the
 * open part encoded, the ticket index frozen (ticket-columns-writer.ts). The index's columns
 * are then written and the whole checksummed a stretch at a time over later turns, so that
 * commands go on meanwhile (a snapshot of half a million closed tickets in one turn held
 * every command for 50-160 ms); the view may change meanwhile, the snapshot does not.
 */
export async function saveSnapshot(log: EventLog, view: PartitionView): Promise<number> {
  const store = log.snapshots;
  if (store === undefined) return 0;
  const [nextOffset, takenAt] = [view.nextOffset, Date.now()];
  const { state: toWrite, threads, columns } = viewStateToWriteInStretches(view);
  let state: Uint8Array;
  try {
    // The open entries, then the closed tickets' columns, a stretch a turn: the view goes on meanwhile.
    while (threads.writeStretch()) await nextTurn();
    state = encodeSnapshotState(toWrite, await touchedBuffer(snapshotStateRoom(toWrite)));
    while (columns.writeStretch()) await nextTurn();
  } finally {
    threads.release();
    columns.release();
  }
  const fields = { logId: store.logId, partition: view.partition, nextOffset, takenAt, state };
  const checksum = await snapshotChecksumInStretches({ format: SNAPSHOT_FORMAT, ...fields }, nextTurn);
  const bytes = encodeSnapshot(fields, checksum);
  // The record before nextOffset is durable (the view has nothing in flight), and this writer's alone until the save.
  const anchor = store.keepsAnchors === true && nextOffset > 0n ? await recordAnchor(log, view.partition, nextOffset - 1n) : null;
  await store.save(view.partition, bytes, nextOffset, anchor);
  const known = covered.get(view);
  if (known === undefined || known.nextOffset < nextOffset) covered.set(view, { nextOffset, size: bytes.byteLength });
  return bytes.byteLength;
}

/** A buffer of `size` bytes whose memory is touched (faulted in) a stretch a turn, for the state to be encoded into. */
async function touchedBuffer(size: number, stretchBytes = 4 << 20): Promise<Buffer> {
  const buf = Buffer.allocUnsafeSlow(size);
  for (let at = 0; at < size; at += stretchBytes) {
    buf.fill(0, at, Math.min(at + stretchBytes, size));
    await nextTurn();
  }
  return buf;
}

/** Resolves after the I/O and timers due now have run (setImmediate): what a snapshot yields to between stretches. */
function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
