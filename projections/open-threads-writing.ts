/**
 * A snapshot's open entries written a stretch at a time, the view going on meanwhile
 * (src/projector/snapshots.ts saveSnapshot drives it). Written in one turn, a backlog held the
 * event loop for as long: ~1.3 µs per open entry (100,000 open entries: 120-150 ms, 2026-12-07;
 * 786,000: 1.0 s), every snapshot.
 *
 * WHAT IS WRITTEN. The `threads` field of the state as it was when the writing began (when the
 * snapshot's offset was taken): the threads that held open entries then, each with those
 * entries, in the order openThreadsOf gives them. The bytes are those open-entries-writer.ts
 * writes in one turn (test/projector/open-threads-writing.test.ts holds them to it).
 *
 * COPY ON WRITE. The fold changes an entry only in PartitionView.applyEvent, which first tells
 * the view's entry watchers (watchEntryChanges). An entry of the snapshot not written yet is
 * written then, as it still is, and its bytes kept until its turn comes. Entries submitted
 * since are not in the snapshot; an entry closed since is written as it was, open. So no entry
 * is ever copied but the ones changed while the snapshot is written, and each at most once.
 *
 * The bytes go into chunks of fresh memory (CHUNK_BYTES), a stretch's worth at a time, so the
 * memory's first touch is spread over the turns too; the state's encoding copies them in
 * (writeAvro) once every entry is written.
 */
import { noRoom, resetShort, writeString, writeVarint, wroteShort, MAX_VARINT_BYTES } from '../src/events/body-writer.ts';
import { decodeSnapshotThreads, encodeSnapshotEntry, type ThreadsToWrite } from '../src/events/snapshot-codec.ts';
import type { SnapshotThread } from '../src/events/snapshot-types.ts';
import type { EntryState } from './entry-state.ts';
import { writeEnd, writeEntry, type OpenThread } from './open-entries-writer.ts';
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

export class OpenThreadsWriting implements ThreadsToWrite {
  readonly #threads: OpenThread[] = [];
  /** Each thread's place in #threads (an entry's thread says where the entry is: see #pending). */
  readonly #threadAt = new Map<ThreadState<EntryState>, number>();
  /** The highest seq issued when the writing began: an entry of a higher seq was submitted since, and is not in it. */
  readonly #issuedThrough: number;
  /** Entries of the snapshot changed before their turn came: their bytes as they were. */
  readonly #kept = new Map<EntryState, Uint8Array>();
  readonly #chunks: Uint8Array[] = [];
  #chunk: Buffer = Buffer.alloc(0);
  #used = 0;
  /** The next thread to write, and the next of its entries (-1: its header first). */
  #thread = 0;
  #entry = -1;
  #done = false;
  #unwatch: (() => void) | null;

  /** The view's open entries as they are now, to be written in stretches; call `release` after, whatever happens. */
  constructor(
    view: PartitionView,
    private readonly stretchEntries = OPEN_STRETCH.entries,
  ) {
    this.#issuedThrough = view.issuedThrough;
    for (const thread of view.threads.values()) {
      const open = thread.openEntries();
      if (open.length === 0) continue;
      this.#threadAt.set(thread, this.#threads.length);
      this.#threads.push({ tenant: thread.tenant, thread: thread.thread, open });
    }
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
      } else if (this.#entry < 0) {
        this.#put((buf, pos) => writeThreadHead(thread, buf, pos));
        this.#entry = 0;
      } else if (this.#entry < thread.open.length) {
        this.#writeEntry(thread.open[this.#entry++]!);
        written++;
      } else {
        this.#put(writeEnd);
        this.#thread++;
        this.#entry = -1;
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
    this.#threadAt.clear();
    this.#kept.clear();
  }

  /** The fold is about to change `entry`: if the snapshot still needs it as it is, its bytes are taken now. */
  #beforeChange(entry: EntryState): void {
    if (!this.#pending(entry)) return;
    this.#kept.set(entry, entryBytes(entry));
    OPEN_STRETCH.kept++;
  }

  /**
   * Whether `entry` is in the snapshot and neither written nor kept yet. Every entry open when
   * the writing began is in it (a closed one has left the view, and the fold changes no other),
   * and those are the ones of a seq issued by then; its thread's place says whether its turn
   * came: threads before the one being written are written, those after it are not, and in
   * that one the entries from #entry on are not (a change is mostly to a head: found at once).
   * No set of the entries is made: for 100,000 open entries one took 20-35 ms of the first turn.
   */
  #pending(entry: EntryState): boolean {
    if (entry.seq > this.#issuedThrough || this.#kept.has(entry)) return false;
    const at = this.#threadAt.get(entry.threadState);
    if (at === undefined || at < this.#thread) return false;
    return at > this.#thread || this.#threads[at]!.open.indexOf(entry, Math.max(this.#entry, 0)) >= 0;
  }

  #writeEntry(entry: EntryState): void {
    const kept = this.#kept.size === 0 ? undefined : this.#kept.get(entry);
    if (kept !== undefined) {
      this.#kept.delete(entry);
      this.#put((buf, pos) => (pos + kept.byteLength > buf.length ? noRoom() : (buf.set(kept, pos), pos + kept.byteLength)));
      return;
    }
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
function writeThreadHead(thread: OpenThread, buf: Buffer, pos: number): number {
  pos = writeString(thread.tenant, buf, pos);
  if (pos >= 0) pos = writeString(thread.thread, buf, pos);
  if (pos < 0) return pos;
  return pos + MAX_VARINT_BYTES > buf.length ? noRoom() : writeVarint(thread.open.length, buf, pos);
}

/** One entry's bytes as it is now (a copy of its own). */
function entryBytes(entry: EntryState): Uint8Array {
  for (let size = 1024; ; size *= 4) {
    const buf = Buffer.allocUnsafe(size);
    resetShort();
    const end = writeEntry(entry, buf, 0);
    if (end >= 0) return new Uint8Array(buf.subarray(0, end));
    if (!wroteShort()) return encodeSnapshotEntry(entryOf(entry));
  }
}
