/**
 * A column of the ticket index holding numbers that need float64 in general (seqs, store-clock
 * times, log offsets) in 2 or 4 bytes a row. Rows are grouped in blocks of BLOCK consecutive rows;
 * a block's base is the first value set in it, and a row holds its value minus its block's
 * base as an Int16 or Int32 (per chunk: an Int16 chunk is widened to Int32 when a difference
 * needs it). Neighbouring rows close near each other, so their seqs, close times and
 * offsets differ little; a value whose difference does not fit (a block spanning more than
 * 2^31 seqs, offsets or milliseconds: about 24 days of closes) is kept whole in a map instead.
 * The marker of such a value is -2^15 in either width (so in an Int32 chunk a difference of
 * exactly -2^15 is kept whole too).
 *
 * Storage is chunked (chunked-column.ts): chunks of CHUNK rows of deltas, each with its
 * blocks' bases. Rows are the index's row numbers (never renumbered): row `row` is element
 * `i` = row - rowBase, rowBase a multiple of CHUNK; the index drops whole chunks from the front.
 */
import { CHUNK, CHUNK_BITS } from './chunked-column.ts';

const BLOCK_BITS = 12;
const BLOCK = 1 << BLOCK_BITS;
const BLOCKS_PER_CHUNK = CHUNK / BLOCK;
const IN_CHUNK = CHUNK - 1;
/** The delta that marks a value kept whole in `#wide` (an Int16 and an Int32 alike). */
const WIDE = -0x8000;
const INT16_MAX = 0x7fff;

type Deltas = Int16Array | Int32Array;

export class DeltaColumn {
  #deltas: Deltas[] = [];
  /** Per chunk, its blocks' bases (NaN: none set yet). */
  #bases: Float64Array[] = [];
  /** Values whose difference does not fit, by row. */
  readonly #wide: Map<number, number>;

  constructor(wide = new Map<number, number>()) {
    this.#wide = wide;
  }

  /** Row `row`'s value (element `i` = row - rowBase); NaN if never set. */
  get(row: number, i: number): number {
    const c = i >>> CHUNK_BITS;
    const delta = this.#deltas[c]![i & IN_CHUNK]!;
    if (delta === WIDE) return this.#wide.get(row)!;
    return this.#bases[c]![(i & IN_CHUNK) >>> BLOCK_BITS]! + delta;
  }

  set(row: number, i: number, value: number): void {
    const c = i >>> CHUNK_BITS;
    const bases = this.#bases[c]!;
    const block = (i & IN_CHUNK) >>> BLOCK_BITS;
    let base = bases[block]!;
    if (Number.isNaN(base)) bases[block] = base = value;
    const delta = value - base;
    if (this.#wide.size !== 0) this.#wide.delete(row); // most columns never hold a whole value: no Map call per set
    let deltas = this.#deltas[c]!;
    if (!fitsInt32(delta)) {
      deltas[i & IN_CHUNK] = WIDE;
      this.#wide.set(row, value);
      return;
    }
    if ((delta < -INT16_MAX || delta > INT16_MAX) && deltas instanceof Int16Array) deltas = this.#deltas[c] = Int32Array.from(deltas);
    deltas[i & IN_CHUNK] = delta;
  }

  /**
   * A copy reading the same values, for a frozen ticket index (ticket-index.ts freeze): it
   * shares the chunks and the map of whole values. The index writes no element of a row the
   * copy holds again, and forgets none of their whole values until the copy is released.
   */
  sharedCopy(): DeltaColumn {
    const copy = new DeltaColumn(this.#wide);
    copy.#deltas = this.#deltas.slice();
    copy.#bases = this.#bases.slice();
    return copy;
  }

  /** Row `row` was removed: its whole value, if any, goes. */
  forget(row: number): void {
    this.#wide.delete(row);
  }

  /** Room for elements [0, length). */
  ensure(length: number): void {
    while (this.#deltas.length * CHUNK < length) {
      this.#deltas.push(new Int16Array(CHUNK));
      this.#bases.push(new Float64Array(BLOCKS_PER_CHUNK).fill(NaN));
    }
  }

  /** The first `count` chunks go (their rows were removed): element numbers move down by count * CHUNK. */
  dropFront(count: number): void {
    this.#deltas.splice(0, count);
    this.#bases.splice(0, count);
  }

  /** `hash` of the values of elements [start, start + into.length) into `into` (rowBase 0: rows are elements), a chunk at a time. */
  hashes(start: number, into: Uint32Array, hash: (value: number) => number): void {
    for (let j = 0; j < into.length;) {
      const i = start + j;
      const c = i >>> CHUNK_BITS;
      const [deltas, bases] = [this.#deltas[c]!, this.#bases[c]!];
      const end = Math.min(into.length, j + CHUNK - (i & IN_CHUNK));
      for (let at = i & IN_CHUNK; j < end; j++, at++) {
        const delta = deltas[at]!;
        into[j] = hash(delta === WIDE ? this.#wide.get(c * CHUNK + at)! : bases[at >>> BLOCK_BITS]! + delta);
      }
    }
  }

  /** Sets chunk `c`'s rows from `values` (at most CHUNK of them; rows c * CHUNK on, elements too: rowBase 0): Int16 when every difference fits. */
  loadChunk(c: number, values: Float64Array): void {
    this.ensure(c * CHUNK); // not chunk c itself: its deltas are made below, at the width they need (no chunk made twice)
    const deltas = (scratch ??= new Int32Array(CHUNK));
    const bases = (this.#bases[c] ??= new Float64Array(BLOCKS_PER_CHUNK).fill(NaN));
    let narrow = true;
    for (let j = 0, base = 0; j < values.length; j++) {
      const value = values[j]!;
      if ((j & (BLOCK - 1)) === 0) bases[j >>> BLOCK_BITS] = base = value;
      const delta = value - base;
      if (fitsInt32(delta)) {
        deltas[j] = delta;
        if (delta < -INT16_MAX || delta > INT16_MAX) narrow = false;
      } else {
        deltas[j] = WIDE;
        this.#wide.set(c * CHUNK + j, value);
      }
    }
    const chunk = narrow ? new Int16Array(CHUNK) : new Int32Array(CHUNK);
    chunk.set(deltas.subarray(0, values.length));
    this.#deltas[c] = chunk;
  }
}

/** Where loadChunk computes a chunk's differences before choosing its width. */
let scratch: Int32Array | null = null;

/** A whole difference an Int32 holds that is not the WIDE marker. */
function fitsInt32(delta: number): boolean {
  return delta >= -0x7fffffff && delta <= 0x7fffffff && delta !== WIDE && Number.isInteger(delta);
}
