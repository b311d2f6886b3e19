/**
 * An open-addressing hash table from 32-bit hashes to rows of the ticket index
 * (ticket-index.ts), several rows per hash allowed: 4 bytes a slot, no objects. A slot holds a
 * row's tag (nonzero; 0 is an empty slot). The table keeps no hash per slot: whoever looks up
 * says which tags hit (their row's hash and identity are in the index's columns), and a dead
 * tag (a pruned row's) simply never hits. Dead slots stay until a rebuild, which the index runs
 * from its live rows when `hasRoomFor` says no (3/4 of the slots used).
 *
 * Any capacity, not only powers of two: a hash's first slot is its fraction of the capacity
 * (mixed, times capacity / 2^32: its high bits choose), and a probe walks on linearly,
 * wrapping at the end. A rebuild sizes the table to half use and it fills to 3/4 before the
 * next (growing 1.5 times): 5.3 to 8 bytes a tag, where powers of two range from 5.3 to 10.7.
 */
const MIN_CAPACITY = 16;
/** Hashes `fill` asks for at a time. */
const STRETCH = 65_536;
/** Slots per region of `fill` (256 KiB: a core's cache holds one; at most 2^16, a place in one fits 2 bytes). */
const REGION_BITS = 16;
const REGION = 1 << REGION_BITS;
const IN_REGION = REGION - 1;
/** Use right after a rebuild; no room past 3/4. */
const REBUILT_LOAD = 0.5;

/** A table's slots and how many are used (RowTable.filled, RowTable.of). */
export interface FilledTable {
  slots: Uint32Array;
  used: number;
}

export class RowTable {
  #slots: Uint32Array;
  /** capacity / 2^32: a hash times it is the hash's first slot. */
  #scale: number;
  /** Slots not empty (live or dead): a probe ends only at an empty slot, so they are kept below 3/4. */
  #used = 0;

  constructor(capacity = MIN_CAPACITY) {
    this.#slots = new Uint32Array(Math.max(MIN_CAPACITY, capacity));
    this.#scale = this.#slots.length / 4294967296;
  }

  get capacity(): number {
    return this.#slots.length;
  }

  /** Tags held (live or dead). */
  get size(): number {
    return this.#used;
  }

  /** Its slots and how many are used, to hand to another thread (table-fill-aside.ts); the table is not used after. */
  get filled(): FilledTable {
    return { slots: this.#slots, used: this.#used };
  }

  /** A table of `filled`'s slots (filled on another thread by this code: table-fill-aside.ts), as they are. */
  static of(filled: FilledTable): RowTable {
    const table = new RowTable();
    table.#slots = filled.slots;
    table.#scale = filled.slots.length / 4294967296;
    table.#used = filled.used;
    return table;
  }

  /** Whether `count` more tags can be inserted and leave it under 3/4 used. */
  hasRoomFor(count: number): boolean {
    return (this.#used + count) * 4 < this.#slots.length * 3;
  }

  /** The first tag under `hash` that `hit` accepts, or 0. */
  find(hash: number, hit: (tag: number) => boolean): number {
    const slots = this.#slots;
    for (let i = this.#slotOf(hash); ; i = i + 1 === slots.length ? 0 : i + 1) {
      const tag = slots[i]!;
      if (tag === 0) return 0;
      if (hit(tag)) return tag;
    }
  }

  /** Every tag under `hash` that `hit` accepts. */
  findAll(hash: number, hit: (tag: number) => boolean): number[] {
    const found: number[] = [];
    const slots = this.#slots;
    for (let i = this.#slotOf(hash); ; i = i + 1 === slots.length ? 0 : i + 1) {
      const tag = slots[i]!;
      if (tag === 0) return found;
      if (hit(tag)) found.push(tag);
    }
  }

  /** Adds `tag` under `hash` into the first empty slot of its probe (a dead slot is not reused: the index's rebuild drops them). Call only with room for it (hasRoomFor). */
  insert(hash: number, tag: number): void {
    const slots = this.#slots;
    let i = this.#slotOf(hash);
    while (slots[i] !== 0) i = i + 1 === slots.length ? 0 : i + 1;
    slots[i] = tag;
    this.#used++;
  }

  /**
   * Empties the table and fills it with `tags[k]` (k + 1 when null) under the hash of k for k from
   * 0 to count - 1, sized as `reset` sizes it; `hashes(start, into)` writes the hashes of k =
   * start, start + 1, ... into `into` (a stretch at a time: no call per tag). Inserting in k
   * order would write all over the slots (a cache miss each, at millions of tags); instead the
   * tags are first sorted into regions of REGION slots by their first slot (a counting pass, a
   * scatter pass), then inserted region by region, so each probe walks slots already in cache.
   * `scratch`: the sort's arrays, shared by the tables filled one after the other (fresh memory
   * is not free).
   */
  fill(count: number, hashes: (start: number, into: Uint32Array) => void, tags: Uint32Array | null, scratch = new FillScratch()): void {
    this.reset(count);
    const slots = this.#slots;
    const scale = this.#scale;
    const regions = Math.ceil(slots.length / REGION);
    const next = new Uint32Array(regions + 1);
    const firsts = scratch.stretch(count);
    const stretches = (visit: (start: number, length: number) => void): void => {
      for (let start = 0; start < count; start += firsts.length) {
        const length = Math.min(firsts.length, count - start);
        hashes(start, firsts.subarray(0, length));
        for (let j = 0; j < length; j++) firsts[j] = Math.floor((Math.imul(firsts[j]!, 0x9e3779b1) >>> 0) * scale); // #slotOf
        visit(start, length);
      }
    };
    stretches((_, length) => {
      for (let j = 0; j < length; j++) next[(firsts[j]! >>> REGION_BITS) + 1]!++;
    });
    for (let r = 1; r <= regions; r++) next[r]! += next[r - 1]!;
    // Sorted by region, each tag with its first slot's place in its region (2 bytes: the region's number is where it lies).
    const [sortedPlace, sortedTags] = scratch.arrays(count);
    stretches((start, length) => {
      for (let j = 0; j < length; j++) {
        const first = firsts[j]!;
        const at = next[first >>> REGION_BITS]!++;
        sortedPlace[at] = first & IN_REGION;
        sortedTags[at] = tags === null ? start + j + 1 : tags[start + j]!;
      }
    });
    // next[r] is now where region r's tags end (and r + 1's begin).
    for (let r = 0, k = 0; r < regions; r++) {
      for (const base = r << REGION_BITS; k < next[r]!; k++) {
        let i = base + sortedPlace[k]!;
        while (slots[i] !== 0) i = i + 1 === slots.length ? 0 : i + 1;
        slots[i] = sortedTags[k]!;
      }
    }
    this.#used = count;
  }

  /** A hash's first slot: Fibonacci hashing (times 2^32 / phi, mod 2^32) spreads any hash's bits into the high ones, which choose. */
  #slotOf(hash: number): number {
    return Math.floor((Math.imul(hash, 0x9e3779b1) >>> 0) * this.#scale);
  }

  /** Empties the table, sized for `live` tags at half use; the caller adds them again. */
  reset(live: number): void {
    this.#slots = new Uint32Array(Math.max(MIN_CAPACITY, Math.ceil(live / REBUILT_LOAD) + 1));
    this.#scale = this.#slots.length / 4294967296;
    this.#used = 0;
  }
}

/** The arrays RowTable.fill sorts tags in, kept for the next fill. */
export class FillScratch {
  #place = new Uint16Array(0);
  #tags = new Uint32Array(0);
  #stretch = new Uint32Array(0);

  /** Where a stretch of hashes is written, then turned into first slots: STRETCH long, or `count` when fewer (a small table's rebuild makes no 256 KiB array). */
  stretch(count: number): Uint32Array {
    const length = Math.max(1, Math.min(STRETCH, count));
    if (this.#stretch.length < length) this.#stretch = new Uint32Array(length);
    return this.#stretch;
  }

  arrays(count: number): [Uint16Array, Uint32Array] {
    if (this.#place.length < count) [this.#place, this.#tags] = [new Uint16Array(count), new Uint32Array(count)];
    return [this.#place, this.#tags];
  }
}
