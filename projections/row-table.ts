/**
 * An open-addressing hash table from 32-bit hashes to rows of the ticket index
 * (ticket-index.ts), several rows per hash allowed: 4 bytes a slot, no objects. A slot holds a
 * row's tag (nonzero; 0 is an empty slot). The table keeps no hash per slot: whoever looks up
 * says which tags hit (their row's hash and identity are in the index's columns), and which
 * are dead (a pruned row). Dead slots are reused by later adds and dropped by a rebuild, which
 * the index runs when `full` says so, from its live rows.
 */
const MIN_CAPACITY = 16;

export class RowTable {
  #slots: Uint32Array;
  #mask: number;
  /** Slots not empty (live or dead): a probe ends only at an empty slot, so they are kept below 3/4. */
  #used = 0;

  constructor(capacity = MIN_CAPACITY) {
    this.#slots = new Uint32Array(capacityFor(capacity));
    this.#mask = this.#slots.length - 1;
  }

  get capacity(): number {
    return this.#slots.length;
  }

  /** Whether adding more needs a rebuild first (3/4 of the slots used). */
  get full(): boolean {
    return this.#used * 4 >= this.#slots.length * 3;
  }

  /** The first tag under `hash` that `hit` accepts, or 0. */
  find(hash: number, hit: (tag: number) => boolean): number {
    const slots = this.#slots;
    for (let i = hash & this.#mask; ; i = (i + 1) & this.#mask) {
      const tag = slots[i]!;
      if (tag === 0) return 0;
      if (hit(tag)) return tag;
    }
  }

  /** Every tag under `hash` that `hit` accepts. */
  findAll(hash: number, hit: (tag: number) => boolean): number[] {
    const found: number[] = [];
    const slots = this.#slots;
    for (let i = hash & this.#mask; ; i = (i + 1) & this.#mask) {
      const tag = slots[i]!;
      if (tag === 0) return found;
      if (hit(tag)) found.push(tag);
    }
  }

  /** Adds `tag` under `hash`, into the first empty or dead slot of its probe. Call only when not `full`. */
  add(hash: number, tag: number, dead: (tag: number) => boolean): void {
    const slots = this.#slots;
    for (let i = hash & this.#mask; ; i = (i + 1) & this.#mask) {
      const held = slots[i]!;
      if (held === 0) this.#used++;
      else if (!dead(held)) continue;
      slots[i] = tag;
      return;
    }
  }

  /** Empties the table, sized for `live` tags (at most half used: 5.3 to 10.7 bytes a tag when full); the caller adds them again. */
  reset(live: number): void {
    this.#slots = new Uint32Array(capacityFor(live * 2 + 1));
    this.#mask = this.#slots.length - 1;
    this.#used = 0;
  }
}

/** The power of two at or above `wanted`. */
function capacityFor(wanted: number): number {
  let capacity = MIN_CAPACITY;
  while (capacity < wanted) capacity *= 2;
  return capacity;
}
