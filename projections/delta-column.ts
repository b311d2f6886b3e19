/**
 * A column of the ticket index holding numbers that need float64 in general (seqs, store-clock
 * times, log offsets) in 4 bytes a row. Rows are grouped in chunks of CHUNK consecutive row
 * numbers; a chunk's base is the first value set in it, and a row holds its value minus its
 * chunk's base as an Int32. Neighbouring rows close near each other, so their seqs, close times
 * and offsets differ little; a value whose difference does not fit (a chunk spanning more than
 * 2^31 seqs, offsets or milliseconds: about 24 days of closes) is kept whole in a map instead.
 *
 * Rows are the index's row numbers (never renumbered); the array holds rows [rowBase, ...) at
 * `row - rowBase`, and grows and compacts with the index's other columns (ticket-index.ts).
 */
const CHUNK = 4096;
/** The Int32 that marks a value kept whole in `#wide`. */
const WIDE = -0x80000000;

export class DeltaColumn {
  #deltas: Int32Array;
  /** Each chunk's base, by chunk number (row / CHUNK). */
  readonly #bases = new Map<number, number>();
  /** Values whose difference does not fit, by row. */
  readonly #wide = new Map<number, number>();

  constructor(length: number) {
    this.#deltas = new Int32Array(length);
  }

  /** Row `row`'s value (at index `i` = row - rowBase); NaN if never set. */
  get(row: number, i: number): number {
    const delta = this.#deltas[i]!;
    if (delta === WIDE) return this.#wide.get(row)!;
    const base = this.#bases.get(Math.floor(row / CHUNK));
    return base === undefined ? NaN : base + delta;
  }

  set(row: number, i: number, value: number): void {
    const chunk = Math.floor(row / CHUNK);
    let base = this.#bases.get(chunk);
    if (base === undefined) this.#bases.set(chunk, (base = value));
    const delta = value - base;
    this.#wide.delete(row);
    if (delta > WIDE && delta <= 0x7fffffff) this.#deltas[i] = delta;
    else {
      this.#deltas[i] = WIDE;
      this.#wide.set(row, value);
    }
  }

  /** Row `row` was removed: its whole value, if any, goes. */
  forget(row: number): void {
    this.#wide.delete(row);
  }

  /** Room for `length` rows from rowBase on. */
  grow(length: number): void {
    const bigger = new Int32Array(length);
    bigger.set(this.#deltas);
    this.#deltas = bigger;
  }

  /** Rows before `rowBase` + `dropped` are gone: moves the `used` rows after them to the front; chunks wholly before them go. */
  compact(rowBase: number, dropped: number, used: number): void {
    this.#deltas.copyWithin(0, dropped, dropped + used);
    const firstKept = Math.floor((rowBase + dropped) / CHUNK);
    for (let chunk = Math.floor(rowBase / CHUNK); chunk < firstKept; chunk++) this.#bases.delete(chunk);
  }
}
