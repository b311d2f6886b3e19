/**
 * A column of the ticket index (ticket-index.ts) kept in chunks of CHUNK elements instead of
 * one array that doubles: memory follows the rows held (at most one chunk beyond them, where a
 * doubling array holds up to twice the rows, and both copies while it grows), and the index
 * drops the pruned front a whole chunk at a time instead of copying the rest down.
 *
 * Elements are numbered from the column's start (the index's rowBase, a multiple of CHUNK).
 * A sparse column allocates a chunk only when a nonzero value is set in it (reads answer 0
 * where none was); a widening column (tenant ids) starts each chunk at 1 byte an element and
 * widens that chunk alone to 2 then 4 bytes when a bigger value is set in it.
 *
 * `shareWith()` hands a copy of the column that shares its chunks (a frozen ticket index, for a
 * snapshot written over several turns): until `unshare()`, a chunk both hold is copied before
 * this column first writes into it, so the copy keeps reading what was there when it was made.
 */
export const CHUNK_BITS = 16;
export const CHUNK = 1 << CHUNK_BITS;
const IN_CHUNK = CHUNK - 1;

export type Chunk = Uint8Array | Uint16Array | Uint32Array;

export class ChunkedColumn {
  chunks: (Chunk | undefined)[] = [];
  /** Chunks a copy made by shareWith() holds too (null: none is shared): copied on this column's next write to them. */
  #shared: Set<Chunk> | null = null;

  /** `make` builds an empty chunk; `sparse`: chunks only where a nonzero value is set; `widening`: Uint8 chunks widened as needed. */
  constructor(
    private readonly make: (length: number) => Chunk,
    private readonly sparse = false,
    private readonly widening = false,
  ) {}

  get(i: number): number {
    const chunk = this.chunks[i >>> CHUNK_BITS];
    return chunk === undefined ? 0 : chunk[i & IN_CHUNK]!;
  }

  set(i: number, value: number): void {
    const c = i >>> CHUNK_BITS;
    let chunk = this.chunks[c];
    if (chunk === undefined) {
      if (this.sparse && value === 0) return;
      chunk = this.chunks[c] = this.make(CHUNK);
    }
    if (this.#shared !== null && this.#shared.delete(chunk)) chunk = this.chunks[c] = chunk.slice();
    if (this.widening && value > 0xff && value > maxOf(chunk))
      chunk = this.chunks[c] = value > 0xffff ? Uint32Array.from(chunk) : Uint16Array.from(chunk);
    chunk[i & IN_CHUNK] = value;
  }

  /**
   * A copy of this column holding the same chunks. `copyOnWrite`: each is copied on this
   * column's next write to it (until unshare); without, the caller writes no element the copy reads.
   */
  shareWith(copyOnWrite: boolean): ChunkedColumn {
    const copy = new ChunkedColumn(this.make, this.sparse, this.widening);
    copy.chunks = this.chunks.slice();
    if (copyOnWrite) this.#shared = new Set(this.chunks.filter((chunk) => chunk !== undefined));
    return copy;
  }

  /** The copy shareWith() made is done with: writes go to the chunks in place again. */
  unshare(): void {
    this.#shared = null;
  }

  /** Room for elements [0, length) (a sparse column allocates on set). */
  ensure(length: number): void {
    const needed = Math.ceil(length / CHUNK);
    if (this.sparse) {
      if (this.chunks.length < needed) this.chunks.length = needed;
      return;
    }
    while (this.chunks.length < needed) this.chunks.push(this.make(CHUNK));
  }

  /** The first `count` chunks go (their elements were pruned); element numbers move down by count * CHUNK. */
  dropFront(count: number): void {
    this.chunks.splice(0, count);
  }

  /** Sets chunk `c`'s elements from `values` (at most CHUNK of them) at once: a new chunk (none, in a sparse column, if all are 0). */
  loadChunk(c: number, values: Uint8Array | Uint32Array): void {
    if (this.chunks.length <= c) this.chunks.length = c + 1;
    if (this.sparse && !hasNonzero(values)) {
      this.chunks[c] = undefined;
      return;
    }
    let chunk = this.make(CHUNK);
    if (this.widening) {
      const max = maxIn(values);
      if (max > 0xff) chunk = max > 0xffff ? new Uint32Array(CHUNK) : new Uint16Array(CHUNK);
    }
    chunk.set(values);
    this.chunks[c] = chunk;
  }

  /** Elements [start, start + into.length) copied into `into` (0 where a sparse chunk is absent). */
  copy(start: number, into: Chunk): void {
    for (let done = 0; done < into.length;) {
      const i = start + done;
      const [c, at] = [i >>> CHUNK_BITS, i & IN_CHUNK];
      const length = Math.min(CHUNK - at, into.length - done);
      const chunk = this.chunks[c];
      if (chunk === undefined) into.fill(0, done, done + length);
      else into.set(chunk.subarray(at, at + length), done);
      done += length;
    }
  }

  /** Chunk `c` itself (allocated if it was not), for writing a whole chunk in one loop. */
  chunk(c: number): Chunk {
    if (this.chunks.length <= c) this.chunks.length = c + 1;
    return (this.chunks[c] ??= this.make(CHUNK));
  }
}

function maxOf(chunk: Chunk): number {
  return chunk instanceof Uint8Array ? 0xff : chunk instanceof Uint16Array ? 0xffff : 0xffffffff;
}

function hasNonzero(values: ArrayLike<number>): boolean {
  for (let i = 0; i < values.length; i++) if (values[i] !== 0) return true;
  return false;
}

function maxIn(values: ArrayLike<number>): number {
  let max = 0;
  for (let i = 0; i < values.length; i++) if (values[i]! > max) max = values[i]!;
  return max;
}
