/**
 * A segment: one file of a partition's log, named by its base offset (every record in it
 * has an offset >= base and < the next segment's base). The file is a header (which log,
 * partition and base: segment-header.ts), frames, and once the segment is no longer the
 * active one, a seal naming the next segment's base (frame.ts). In memory it is a little
 * metadata and a sparse index (one entry per INDEX_INTERVAL bytes) from offsets to frame
 * positions, never the records themselves.
 *
 * Readers read through one shared read handle per segment, opened before compaction may
 * replace the file (see compaction.ts), so a reader always sees the bytes its index
 * describes. A retired segment (compacted away) closes that handle once no reader holds it.
 */
import { open, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
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
  /** Offset of the last record, or null while empty. */
  lastOffset: bigint | null = null;
  /** The next segment's base, once this one is sealed; null while it is the active segment. */
  sealedEnd: bigint | null = null;
  #indexDeltas: number[] = [];
  #indexPositions: number[] = [];
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
    const lastIndexed = this.#indexPositions.at(-1);
    if (lastIndexed === undefined || pos - lastIndexed >= INDEX_INTERVAL) {
      this.#indexDeltas.push(Number(first - this.base));
      this.#indexPositions.push(pos);
    }
    this.size = end;
    this.lastOffset = last;
  }

  /** A byte position at a frame boundary from which reading finds every record >= offset. */
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

  /** The shared read handle; opened once, so it keeps pointing at these bytes. */
  readHandle(): Promise<FileHandle> {
    this.#readHandle ??= open(this.path, 'r');
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
    if (handle) await (await handle).close();
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
