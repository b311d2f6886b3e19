/**
 * A segment: one file of a partition's log, named by its base offset (every record in it
 * has an offset >= base and < the next segment's base). The file is a header (which log,
 * partition and base: segment-header.ts), frames, and once the segment is no longer the
 * active one, a seal naming the next segment's base (frame.ts). In memory it is a little
 * metadata and a sparse index (one entry per INDEX_INTERVAL bytes) from offsets to frame
 * positions, never the records themselves.
 *
 * The index is known whole for a segment whose frames were read or written by this process
 * (the active segment, scanned at open; a segment the writer or a compaction wrote). A
 * segment opened unread (a sealed one, whose header and seal recovery.ts checks, not its
 * frames; the active one after a clean close, see recovery.ts) learns its index on demand: the
 * first read positioned inside it reads its frames (CRC-checked) from the last known one up to
 * the wanted offset. A damaged frame stops the learning there; the read that meets it reports
 * it (reader.ts). The writer never appends to an active segment opened unread: it rolls first.
 *
 * Readers read through one shared read handle per segment, opened before compaction may
 * replace the file (see compaction.ts), so a reader always sees the bytes its index
 * describes. A retired segment (compacted away) closes that handle once no reader holds it.
 */
import { open, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { segmentReadFailure } from './fs-errors.ts';
import { readFrames } from './frame-reader.ts';
import { SEGMENT_HEADER_BYTES } from './segment-header.ts';

const INDEX_INTERVAL = 64 << 10;
const NAME = /^(\d{20})\.log$/;

export function segmentFileName(base: bigint): string {
  return `${base.toString().padStart(20, '0')}.log`;
}

export function parseSegmentFileName(name: string): bigint | null {
  const match = NAME.exec(name);
  return match ? BigInt(match[1]!) : null;
}

export class Segment {
  readonly base: bigint;
  readonly path: string;
  /** Bytes of the header and the whole, committed frames (the seal not included). */
  size = SEGMENT_HEADER_BYTES;
  /** Offset of the last record, or null while empty (or unread: a sealed segment opened by `openedSealed`). */
  lastOffset: bigint | null = null;
  /** Where the last frame starts (`size` while there is none, or while unread: a sealed segment opened by `openedSealed`). */
  lastFrameAt = SEGMENT_HEADER_BYTES;
  /** The next segment's base, once this one is sealed; null while it is the active segment. */
  sealedEnd: bigint | null = null;
  /**
   * Frames ending at or before this byte were checked whole by this process's open (recovery.ts
   * scanFrames: CRC, record structure, offsets in order): reads do not check them again, so a
   * replay from zero CRC-checks the active segment once, not twice.
   */
  checkedTo = SEGMENT_HEADER_BYTES;
  #indexDeltas: number[] = [];
  #indexPositions: number[] = [];
  /** Frames are known (indexed) up to this byte; `size` once the segment is known whole. */
  #knownTo = SEGMENT_HEADER_BYTES;
  /** The base of the last known frame (null: none known yet). */
  #lastKnownBase: bigint | null = null;
  /** Learning stopped at a frame that is not a checked frame in order: the reader meets it and reports it. */
  #learningStopped = false;
  #learning: Promise<void> = Promise.resolve();
  #readHandle: Promise<FileHandle> | null = null;
  #readers = 0;
  #retired = false;

  constructor(dir: string, base: bigint) {
    this.base = base;
    this.path = join(dir, segmentFileName(base));
  }

  /** The offset after this segment's last record (its base while empty). */
  get nextOffset(): bigint {
    return this.lastOffset === null ? this.base : this.lastOffset + 1n;
  }

  /** Whether any frame follows the header. */
  get hasFrames(): boolean {
    return this.size > SEGMENT_HEADER_BYTES;
  }

  /** The offsets this segment accounts for end here: at its seal, else after its last record. */
  get endOffset(): bigint {
    return this.sealedEnd ?? this.nextOffset;
  }

  /** Records a committed frame [pos, end) whose records span offsets first..last. */
  addFrame(pos: number, end: number, first: bigint, last: bigint): void {
    // Every frame before it is known: a compaction writes its output whole, and the writer never
    // appends to a segment opened unread (it rolls first: openedUnread).
    this.#know(pos, end, first);
    this.size = end;
    this.lastFrameAt = pos;
    this.lastOffset = last;
  }

  /** A sealed segment opened unread: `size` bytes of header and frames, then a seal naming `sealedEnd`. */
  openedSealed(size: number, sealedEnd: bigint): void {
    this.size = size;
    this.lastFrameAt = size;
    this.sealedEnd = sealedEnd;
  }

  /**
   * The active segment opened unread after a clean close (recovery.ts): `size` bytes of header
   * and frames, the last frame (checked) starting at `lastFrameAt` and ending with `lastOffset`.
   * Its frames are CRC-checked when read, as a sealed segment's are (checkedTo stays at the
   * header), and nothing is appended to it: the writer's first append rolls (openedUnread).
   */
  openedClean(size: number, lastFrameAt: number, lastFrameBase: bigint, lastOffset: bigint): void {
    this.size = size;
    this.lastFrameAt = lastFrameAt;
    this.#lastFrameBase = lastFrameBase;
    this.lastOffset = lastOffset;
    this.openedUnread = true;
  }

  /** The first offset of the last frame, where openedClean read it: a seek into that frame needs no index. */
  #lastFrameBase: bigint | null = null;

  /**
   * Opened by openedClean: its frames were not proved whole at open. The writer seals it before
   * its first append (segment-appender.ts), so that it is then checked as every sealed segment
   * is: damage in it (bit rot since the close) fails the reads that meet it, and never makes a
   * later open, after a crash, refuse the partition with the appends acknowledged since.
   */
  openedUnread = false;

  #know(pos: number, end: number, first: bigint): void {
    const lastIndexed = this.#indexPositions.at(-1);
    if (lastIndexed === undefined || pos - lastIndexed >= INDEX_INTERVAL) {
      this.#indexDeltas.push(Number(first - this.base));
      this.#indexPositions.push(pos);
    }
    this.#knownTo = end;
    this.#lastKnownBase = first;
  }

  /**
   * A byte position at a frame boundary from which reading finds every record >= offset,
   * learning the index up to it first if the segment was opened unread. The caller holds a
   * read reference (acquire).
   */
  async seek(offset: bigint): Promise<number> {
    // A record of the last frame (a snapshot's anchor after a clean close: src/log/record-anchor.ts) is read without learning the rest.
    if (this.#lastFrameBase !== null && offset >= this.#lastFrameBase) return this.lastFrameAt;
    if (offset > this.base && this.#mustLearn(offset)) {
      const learning = this.#learning.then(() => this.#learn(offset));
      this.#learning = learning.catch(() => undefined); // a failed read is the caller's; the next may learn again
      await learning;
    }
    return this.positionFor(offset);
  }

  #mustLearn(offset: bigint): boolean {
    return !this.#learningStopped && this.#knownTo < this.size && (this.#lastKnownBase === null || this.#lastKnownBase <= offset);
  }

  /** Reads frames from the last known one until one starts past `offset` (its predecessor holds it), indexing them. */
  async #learn(offset: bigint): Promise<void> {
    if (!this.#mustLearn(offset)) return;
    const frames = readFrames(await this.readHandle(), this.#knownTo, this.size, undefined, true);
    let step = await frames.next();
    run: for (; !step.done; step = await frames.next()) {
      for (const { filePos, pos, end, base } of step.value) {
        if (base < this.base || (this.#lastKnownBase !== null && base <= this.#lastKnownBase)) break run;
        this.#know(filePos, filePos + (end - pos), base);
        if (base > offset) return;
      }
    }
    if (step.done !== true || step.value.kind !== 'end') this.#learningStopped = true;
  }

  /** The byte position of the indexed frame at or before `offset` (the header for offsets at or below base). */
  positionFor(offset: bigint): number {
    if (offset <= this.base) return SEGMENT_HEADER_BYTES;
    const delta = Number(offset - this.base);
    let lo = 0;
    let hi = this.#indexDeltas.length; // find the last entry with delta <= target
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.#indexDeltas[mid]! <= delta) lo = mid + 1;
      else hi = mid;
    }
    return lo === 0 ? SEGMENT_HEADER_BYTES : this.#indexPositions[lo - 1]!;
  }

  /** Takes a read reference; false if the segment is retired (look it up again). */
  acquire(): boolean {
    if (this.#retired) return false;
    this.#readers++;
    return true;
  }

  async release(): Promise<void> {
    this.#readers--;
    if (this.#retired && this.#readers === 0) await this.#closeReadHandle();
  }

  /**
   * The shared read handle; opened once, so it keeps pointing at these bytes. An open that
   * fails is not kept: the next read tries again (the process out of descriptors for a moment
   * made every later read of the segment fail until a restart: the hostile tester, 2026-12-07).
   */
  readHandle(): Promise<FileHandle> {
    if (this.#readHandle === null) {
      const opening = open(this.path, 'r').catch((error: unknown) => {
        if (this.#readHandle === opening) this.#readHandle = null;
        throw segmentReadFailure(this.path, error);
      });
      this.#readHandle = opening;
    }
    return this.#readHandle;
  }

  /** Reads through `handle` (opened when the segment was scanned), wherever the file goes since. */
  keepReadHandle(handle: FileHandle): void {
    this.#readHandle = Promise.resolve(handle);
  }

  /** No new readers; the handle closes when the last one releases. */
  async retire(): Promise<void> {
    this.#retired = true;
    if (this.#readers === 0) await this.#closeReadHandle();
  }

  async #closeReadHandle(): Promise<void> {
    const handle = this.#readHandle;
    this.#readHandle = null;
    const opened = await handle?.catch(() => null); // an open that failed left nothing to close
    await opened?.close();
  }
}

/** The segment that holds `offset` if any: the last with base <= offset. */
export function segmentIndexFor(segments: readonly Segment[], offset: bigint): number {
  let lo = 0;
  let hi = segments.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (segments[mid]!.base <= offset) lo = mid + 1;
    else hi = mid;
  }
  return lo - 1;
}
