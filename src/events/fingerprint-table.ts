/**
 * Readers by writer-schema fingerprint, for the codec's lookup per record (codec.ts #readerAt).
 * The fingerprint is read from the record as its two 32-bit halves (no BigInt per record).
 * A Map from the low half to a list of readers cost a hash of the key, the Map's own probing
 * and a walk of the list for every record a replay decodes; this table is built once, with
 * open addressing over a power-of-two array at most a quarter full, so a lookup is one
 * multiply, one or two slots compared on both halves, and no allocation.
 */

/** The table holds at most this share of its slots: most lookups then find their slot first. */
const MAX_LOAD = 0.25;

export class FingerprintTable<R> {
  readonly #lows: Uint32Array;
  readonly #highs: Uint32Array;
  readonly #values: (R | undefined)[];
  readonly #mask: number;
  /** A slot is the top bits of the low half times a constant (Fibonacci hashing): 32 - log2(size). */
  readonly #shift: number;

  /** `entries`: [low half, high half, value]; no two with the same fingerprint (the caller checks). */
  constructor(entries: readonly (readonly [number, number, R])[]) {
    let size = 8;
    while (entries.length > size * MAX_LOAD) size *= 2;
    this.#lows = new Uint32Array(size);
    this.#highs = new Uint32Array(size);
    this.#values = new Array<R | undefined>(size).fill(undefined);
    this.#mask = size - 1;
    this.#shift = 32 - Math.log2(size);
    for (const [low, high, value] of entries) {
      let slot = this.#slotOf(low);
      while (this.#values[slot] !== undefined) slot = (slot + 1) & this.#mask;
      this.#lows[slot] = low;
      this.#highs[slot] = high;
      this.#values[slot] = value;
    }
  }

  /** The value of the fingerprint whose halves are `low` and `high` (unsigned), or undefined. */
  get(low: number, high: number): R | undefined {
    const values = this.#values;
    for (let slot = this.#slotOf(low); ; slot = (slot + 1) & this.#mask) {
      const value = values[slot];
      if (value === undefined || (this.#lows[slot] === low && this.#highs[slot] === high)) return value;
    }
  }

  #slotOf(low: number): number {
    return Math.imul(low, 0x9e3779b1) >>> this.#shift;
  }
}
