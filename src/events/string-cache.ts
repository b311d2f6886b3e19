/**
 * A small cache of recent strings by their UTF-8 bytes, for the body readers (body-reader.ts)
 * of fields whose values repeat across records: a tenant, thread, agent or holder names many
 * entries, and an entry's id is in each of its events. A hit hands out the string read
 * before, so the events of a replay (and what a view keeps of them) share one string instead
 * of each allocating its own, and a Map keyed by it finds the hash it computed already. A hit
 * is checked byte by byte, so the cache can only save work, never change what is read.
 *
 * Direct-mapped: each string has one slot (slotOf), and a string read into a taken slot
 * replaces what was there. The bytes of the slots' strings are kept in one array, so neither
 * a hit nor a miss allocates anything but a missed string.
 */

/** Strings longer than this (in bytes) are read as they are, never cached. */
export const CACHED_MAX_BYTES = 48;

interface Utf8Slicing {
  utf8Slice(start: number, end: number): string;
}

export class StringCache {
  readonly #slots: number;
  /** Slot s's bytes are bytes [s * CACHED_MAX_BYTES, + its length) of #bytes; its length is -1 while it is empty. */
  readonly #bytes: Uint8Array;
  readonly #lengths: Int32Array;
  readonly #strings: string[];

  /** `slots`: a power of two. */
  constructor(slots: number) {
    this.#slots = slots;
    this.#bytes = new Uint8Array(slots * CACHED_MAX_BYTES);
    this.#lengths = new Int32Array(slots).fill(-1);
    this.#strings = new Array<string>(slots).fill('');
  }

  /** The string of UTF-8 bytes [start, start + length) of `buf` (lying inside it). */
  text(buf: Buffer, start: number, length: number): string {
    if (length > CACHED_MAX_BYTES) return (buf as unknown as Utf8Slicing).utf8Slice(start, start + length);
    const slot = slotOf(buf, start, length, this.#slots);
    const bytes = this.#bytes;
    const at = slot * CACHED_MAX_BYTES;
    if (this.#lengths[slot] === length) {
      let same = true;
      for (let i = 0; i < length; i++)
        if (bytes[at + i] !== buf[start + i]) {
          same = false;
          break;
        }
      if (same) return this.#strings[slot]!;
    }
    const text = (buf as unknown as Utf8Slicing).utf8Slice(start, start + length);
    for (let i = 0; i < length; i++) bytes[at + i] = buf[start + i]!; // a copy: `buf` is the caller's, reused
    this.#lengths[slot] = length;
    this.#strings[slot] = text;
    return text;
  }
}

/**
 * The slot among `slots` (a power of two) of a string's bytes: a hash of its length, its
 * first, quarter-way and middle bytes and its last three, where names that differ mostly differ
 * (order-17, order-18; random ids anywhere). Two strings in one slot only cost a miss: a hit is
 * checked byte by byte.
 */
export function slotOf(buf: Uint8Array, start: number, length: number, slots: number): number {
  const end = start + length;
  const head = length === 0 ? 0 : buf[start]! | (buf[start + (length >> 2)]! << 8) | (buf[start + (length >> 1)]! << 16);
  const tail =
    length === 0 ? 0 : buf[end - 1]! | (buf[end - 2 + (length < 2 ? 1 : 0)]! << 8) | (buf[end - 3 + (length < 3 ? 2 : 0)]! << 16);
  const hash = Math.imul(head ^ Math.imul(tail, 0x9e3779b1) ^ length, 0x85ebca6b);
  return (hash ^ (hash >>> 15)) & (slots - 1);
}
