/**
 * A snapshot's open entries written a stretch at a time, the view going on meanwhile
 * (src/projector/snapshots.ts saveSnapshot drives it). Written in one turn, a backlog held the
 * event loop for as long: ~1.3 µs per open entry (100,000 open entries: 120-150 ms, 2026-12-07;
 * 786,000: 1.0 s), every snapshot.
 *
 * WHAT IS WRITTEN. The `threads` field of the state as it was when the writing began (when the
 * snapshot's offset was taken): the threads that held open entries then, each with those
 * entries, in the order openThreadsOf gives them. The bytes are those open-entries-writer.ts
 * writes in one turn (test/projections/open-threads-writing.test.ts holds them to it).
 *
 * COPY ON WRITE. The fold changes an entry only in PartitionView.applyEvent, which first tells
 * the view's entry watchers (watchEntryChanges). An entry of the snapshot not written yet is
 * written then, as it still is, and its bytes kept until its turn comes. Entries submitted
 * since are not in the snapshot; an entry closed since is written as it was, open. So no entry
 * is ever copied but the ones changed while the snapshot is written, and each at most once.
 *
 * NOTHING PER ENTRY UP FRONT. The first turn lists only the threads that hold open entries; a
 * thread's entries are listed when its turn comes: those still open of a seq issued when the
 * writing began, and those kept and closed since, in seq order. Whether an entry is written or
 * kept is a mark on it (EntryState.snapshotWritten, the writing's number), so the check before
 * each change costs nothing with the backlog. Listing every entry up front (a Set of them, or
 * each thread's copied) took 20-285 ms of the first turn at 100,000 open entries, and finding
 * an entry's place in its thread made a deleteThread of a 100,000-entry backlog take 4.2 s of
 * one turn, N x N (the hostile tester, 2026-12-07).
 *
 * The bytes go into chunks of fresh memory (CHUNK_BYTES), a stretch's worth at a time, so the
 * memory's first touch is spread over the turns too; the state's encoding copies them in
 * (writeAvro) once every entry is written.
 */
import { noRoom, resetShort, writeString, writeVarint, wroteShort, MAX_VARINT_BYTES } from '../src/events/body-writer.ts';
import { decodeSnapshotThreads, encodeSnapshotEntry, type ThreadsToWrite } from '../src/events/snapshot-codec.ts';
import type { SnapshotThread } from '../src/events/snapshot-types.ts';
import type { EntryState } from './entry-state.ts';
import { writeEnd, writeEntry } from './open-entries-writer.ts';
import { entryOf } from './open-snapshot.ts';
import type { PartitionView } from './partition-view.ts';
import type { ThreadState } from './thread-state.ts';

/** Open entries written per stretch (writeStretch): ~1-3 ms of a turn here once warm (100,000 open entries, 2026-12-07). */
export const STRETCH_ENTRIES = 1024;

/** The stretch new writings take (changeable for tests), and how many entries were kept as they were before a change (COPY ON WRITE), in all. */
export const OPEN_STRETCH = { entries: STRETCH_ENTRIES, kept: 0 };
const CHUNK_BYTES = 1 << 20;

/** Writes one value into `buf` from `pos`: the end position, or -1 (noRoom() said so when it was only short of room). */
type Write = (buf: Buffer, pos: number) => number;

/** Each writing's number: an entry marked with it (EntryState.snapshotWritten) was written or kept by that writing. */
let writings = 0;

export class OpenThreadsWriting implements ThreadsToWrite {
  /** The threads that held open entries when the writing began (their entries listed when their turn comes). */
  readonly #threads: ThreadState<EntryState>[] = [];
  /** The highest seq issued when the writing began: an entry of a higher seq was submitted since, and is not in it. */
  readonly #issuedThrough: number;
  readonly #generation = ++writings;
  /** Entries of the snapshot changed before their turn came: their bytes as they were. */
  readonly #kept = new Map<EntryState, Uint8Array>();
  /** The same entries by thread: those closed since have left their thread's queue, and are listed from here. */
  readonly #keptByThread = new Map<ThreadState<EntryState>, EntryState[]>();
  readonly #chunks: Uint8Array[] = [];
  #chunk: Buffer = Buffer.alloc(0);
  #used = 0;
  /** The next thread to write, and its entries once listed (null: its head first). */
  #thread = 0;
  #open: EntryState[] | null = null;
  #entry = 0;
  #done = false;
  #unwatch: (() => void) | null;

  /** The view's open entries as they are now, to be written in stretches; call `release` after, whatever happens. */
  constructor(
    view: PartitionView,
    private readonly stretchEntries = OPEN_STRETCH.entries,
  ) {
    this.#issuedThrough = view.issuedThrough;
    for (const thread of view.threads.values()) if (thread.openCount > 0) this.#threads.push(thread);
    this.#unwatch = view.watchEntryChanges((entry) => this.#beforeChange(entry));
    if (this.#threads.length > 0)
      this.#put((buf, pos) => (pos + MAX_VARINT_BYTES > buf.length ? noRoom() : writeVarint(this.#threads.length, buf, pos)));
  }

  /** Writes the next stretch of entries; false once all are written (then `writeAvro` may copy them into the state). */
  writeStretch(): boolean {
    for (let written = 0; written < this.stretchEntries && !this.#done;) {
      const thread = this.#threads[this.#thread];
      if (thread === undefined) {
        this.#put(writeEnd);
        this.#finish();
      } else if (this.#open === null) {
        const open = (this.#open = this.#entriesOf(thread));
        this.#put((buf, pos) => writeThreadHead(thread, open.length, buf, pos));
        this.#entry = 0;
      } else if (this.#entry < this.#open.length) {
        this.#writeEntry(this.#open[this.#entry++]!);
        written++;
      } else {
        this.#put(writeEnd);
        this.#thread++;
        this.#open = null;
      }
    }
    return !this.#done;
  }

  /** The exact size of the written bytes (once all are written). */
  get estimatedBytes(): number {
    this.#checkDone();
    return this.#chunks.reduce((sum, chunk) => sum + chunk.byteLength, 0);
  }

  writeAvro(buf: Buffer, pos: number): number {
    if (pos + this.estimatedBytes > buf.length) return noRoom();
    for (const chunk of this.#chunks) {
      buf.set(chunk, pos);
      pos += chunk.byteLength;
    }
    return pos;
  }

  values(): SnapshotThread[] {
    this.#checkDone();
    return decodeSnapshotThreads(Buffer.concat(this.#chunks));
  }

  /** Stops watching the view (idempotent); the entries not written yet are forgotten. */
  release(): void {
    this.#unwatch?.();
    this.#unwatch = null;
    this.#kept.clear();
    this.#keptByThread.clear();
  }

  /**
   * The fold is about to change `entry`: if the snapshot still needs it as it is (open when the
   * writing began: a seq issued by then; neither written nor kept yet), its bytes are taken now.
   */
  #beforeChange(entry: EntryState): void {
    if (entry.seq > this.#issuedThrough || entry.snapshotWritten === this.#generation) return;
    entry.snapshotWritten = this.#generation;
    this.#kept.set(entry, entryBytes(entry));
    const kept = this.#keptByThread.get(entry.threadState);
    if (kept === undefined) this.#keptByThread.set(entry.threadState, [entry]);
    else kept.push(entry);
    OPEN_STRETCH.kept++;
  }

  /**
   * The entries `thread` held open when the writing began, head first: those still open (a seq
   * issued by then), and those kept and closed since (they left its queue), in seq order, the
   * order of their submissions on the thread.
   */
  #entriesOf(thread: ThreadState<EntryState>): EntryState[] {
    const open = thread.openEntries().filter((entry) => entry.seq <= this.#issuedThrough);
    const closed = this.#keptByThread.get(thread)?.filter((entry) => entry.closed) ?? [];
    return closed.length === 0 ? open : [...open, ...closed].sort((a, b) => a.seq - b.seq);
  }

  #writeEntry(entry: EntryState): void {
    if (entry.snapshotWritten === this.#generation) {
      const kept = this.#kept.get(entry)!;
      this.#kept.delete(entry);
      this.#put((buf, pos) => (pos + kept.byteLength > buf.length ? noRoom() : (buf.set(kept, pos), pos + kept.byteLength)));
      return;
    }
    entry.snapshotWritten = this.#generation;
    if (!this.#tryPut((buf, pos) => writeEntry(entry, buf, pos))) {
      const bytes = encodeSnapshotEntry(entryOf(entry));
      this.#put((buf, pos) => (pos + bytes.byteLength > buf.length ? noRoom() : (buf.set(bytes, pos), pos + bytes.byteLength)));
    }
  }

  /** `write` into the current chunk, or into a new one as large as it needs. */
  #put(write: Write): void {
    if (!this.#tryPut(write)) throw new Error('the open entries writer declined a thread or a copy'); // a string, a count: never
  }

  /** The same; false (nothing written) when `write` declines its value for another reason than room. */
  #tryPut(write: Write): boolean {
    for (let size = CHUNK_BYTES; ; size *= 2) {
      resetShort();
      const end = write(this.#chunk, this.#used);
      if (end >= 0) {
        this.#used = end;
        return true;
      }
      if (!wroteShort()) return false;
      this.#newChunk(size);
    }
  }

  #newChunk(size: number): void {
    this.#closeChunk();
    this.#chunk = Buffer.allocUnsafeSlow(size);
    this.#used = 0;
  }

  #closeChunk(): void {
    if (this.#used > 0) this.#chunks.push(this.#chunk.subarray(0, this.#used));
  }

  #finish(): void {
    this.#closeChunk();
    this.#chunk = Buffer.alloc(0);
    this.#used = 0;
    this.#done = true;
    this.release();
  }

  #checkDone(): void {
    if (!this.#done) throw new Error('the open entries are not all written yet (writeStretch)');
  }
}

/** A thread's tenant and thread, and the count of its one block of entries. */
function writeThreadHead(thread: ThreadState<EntryState>, entries: number, buf: Buffer, pos: number): number {
  pos = writeString(thread.tenant, buf, pos);
  if (pos >= 0) pos = writeString(thread.thread, buf, pos);
  if (pos < 0) return pos;
  if (entries === 0) return pos; // no block: writeEnd follows (a thread whose entries all went unseen: never, see #entriesOf)
  return pos + MAX_VARINT_BYTES > buf.length ? noRoom() : writeVarint(entries, buf, pos);
}

/** One entry's bytes as it is now (a copy of its own). */
function entryBytes(entry: EntryState): Uint8Array {
  for (;;) {
    resetShort();
    const end = writeEntry(entry, scratch, 0);
    if (end >= 0) return new Uint8Array(scratch.subarray(0, end)); // a copy: the scratch is written again
    if (!wroteShort()) return encodeSnapshotEntry(entryOf(entry));
    scratch = Buffer.allocUnsafeSlow(scratch.length * 4);
  }
}

/** Where entryBytes writes an entry before copying it out (grown for a larger entry, kept for the next). */
let scratch = Buffer.allocUnsafeSlow(64 << 10);
