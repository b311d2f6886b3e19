/**
 * A Map (ChurnMap) and a Set (ChurnSet) for keys that come and go in bursts: open entries,
 * their threads, closes waiting for their append, a worker's runs. They behave as a Map and a
 * Set; what differs is how they give memory back.
 *
 * WHY. V8 rehashes a Map's (or Set's) table when it grows, and shrinks it in place once fewer
 * than a quarter of its slots are used: a new table, the old one kept linked to it (for
 * iterators) with the entries it held. Once an old table has been promoted to the old
 * generation (it lived through two scavenges) and is then replaced, the young objects it still
 * points at are kept alive by every scavenge until the next full collection (the scavenger
 * takes old-to-young pointers as roots, whether their holder is alive or not), so they are
 * promoted too, and so is the next table, and what it points at: a chain. A table that grows
 * and shrinks with a bursty load carries the values that passed through it into the old
 * generation, to be found dead there by the next full collection. Measured (--trace-gc-nvp,
 * 2026-12-06): a 3-second micro-benchmark of a Map oscillating between 20 and 220 entries
 * promoted 1.9 MB per scavenge (scavenges of 8 ms), and 56 KB (1.3 ms) as a ChurnMap; the
 * Worker at 10,000 submissions a second in an open loop (each entry on a thread of its own)
 * promoted ~880 KB per scavenge, and ~600 KB with the view's and the Worker's bursty Maps and
 * Sets made ChurnMaps and ChurnSets. (Part of what it still promoted was a head queue's run
 * holding popped items, projections/ordered-heap.ts; the rest has another cause, not found.)
 *
 * The same holds for steady churn at a steady size, with no burst at all. Every set of a new
 * key takes a slot of the table, a delete frees none, so every so many sets V8 rehashes the
 * table into a new one, linked from the old. A table that lived through two scavenges before
 * that (a few hundred sets at 10,000 a second) starts the chain. Measured (2026-12-07,
 * bench/churn-map-gc.ts, steady shape: 30 live entries of ~1 KB, 10 set and 10 deleted a
 * millisecond, 5 s): a Map promoted 93-128 KB per scavenge, a ChurnMap copied as below 19 KB.
 *
 * HOW. Two copies into a new Map (or Set), the old one dropped whole, so that nothing links the
 * old table to the new and no chain starts:
 *   - before a table would shrink in place: a delete that leaves under a quarter of the most it
 *     held since it was made. It costs the entries left (at most a quarter of those deleted
 *     since the last copy): amortised O(1) per delete;
 *   - after every max(REBUILD_MIN, 2 x size) sets of new keys, so that no table lives long
 *     enough to be promoted while it churns. It costs the entries copied, half a set's worth
 *     per set: amortised O(1) per set.
 *
 * EMPTIED. Deleting the last key replaces the collection with a new empty one instead. V8 shrinks
 * a table whose elements fall under half its buckets, even one at its least capacity: deleting
 * the only key is a runtime call that makes a new table of the same size, which the copy above
 * then dropped with the Map. A view folding one entry at a time (a quiet queue, or a replay of
 * lifecycles written one after the other) did both for every entry: measured (2026-12-07,
 * sampling heap profile of a cold start of 1M events), 88 of the 405 MB it allocated.
 *
 * `map` (or `set`) is the current collection, for reading; a reference to it is good until the
 * next set or delete, which may replace it.
 */

/** A copy is made once the size falls under the peak divided by this. */
const SHRINK_FACTOR = 4;

/** A copy is made after this many sets of new keys, or twice the size if more. */
const REBUILD_MIN = 32;

/** When a ChurnMap or ChurnSet copies its collection (see HOW): what it counts since the last copy. */
class CopyPolicy {
  /** The most entries held since the last copy. */
  #peak = 0;
  /** Sets of new keys since the last copy. */
  #adds = 0;

  /** A new key was set, leaving `size`: whether to copy now. */
  added(size: number): boolean {
    if (size > this.#peak) this.#peak = size;
    return ++this.#adds >= REBUILD_MIN && this.#adds >= 2 * size;
  }

  /** A key was deleted, leaving `size`: whether to copy now. */
  deleted(size: number): boolean {
    return size * SHRINK_FACTOR < this.#peak;
  }

  /** A copy of `size` entries was made. */
  copied(size: number): void {
    this.#peak = size;
    this.#adds = 0;
  }
}

export class ChurnMap<K, V> {
  #map = new Map<K, V>();
  readonly #policy = new CopyPolicy();

  /** The current entries (replaced, not changed, by a set or delete that copies). */
  get map(): Map<K, V> {
    return this.#map;
  }

  get size(): number {
    return this.#map.size;
  }

  get(key: K): V | undefined {
    return this.#map.get(key);
  }

  has(key: K): boolean {
    return this.#map.has(key);
  }

  set(key: K, value: V): this {
    const map = this.#map;
    const before = map.size;
    map.set(key, value);
    if (map.size !== before && this.#policy.added(map.size)) this.#copy(map);
    return this;
  }

  delete(key: K): boolean {
    const map = this.#map;
    if (map.size === 1 && map.has(key)) return (this.clear(), true); // EMPTIED
    if (!map.delete(key)) return false;
    if (this.#policy.deleted(map.size)) this.#copy(map);
    return true;
  }

  clear(): void {
    this.#map = new Map();
    this.#policy.copied(0);
  }

  /** A new Map of `map`'s entries (an empty one made empty: copying none costs as much as a few). */
  #copy(map: Map<K, V>): void {
    this.#map = map.size === 0 ? new Map() : new Map(map);
    this.#policy.copied(map.size);
  }

  values(): IterableIterator<V> {
    return this.#map.values();
  }

  [Symbol.iterator](): IterableIterator<[K, V]> {
    return this.#map.entries();
  }
}

export class ChurnSet<T> {
  #set = new Set<T>();
  readonly #policy = new CopyPolicy();

  /** The current members (replaced, not changed, by an add or delete that copies). */
  get set(): ReadonlySet<T> {
    return this.#set;
  }

  get size(): number {
    return this.#set.size;
  }

  has(value: T): boolean {
    return this.#set.has(value);
  }

  add(value: T): this {
    const set = this.#set;
    const before = set.size;
    set.add(value);
    if (set.size !== before && this.#policy.added(set.size)) this.#copy(set);
    return this;
  }

  delete(value: T): boolean {
    const set = this.#set;
    if (set.size === 1 && set.has(value)) return (this.clear(), true); // EMPTIED
    if (!set.delete(value)) return false;
    if (this.#policy.deleted(set.size)) this.#copy(set);
    return true;
  }

  clear(): void {
    this.#set = new Set();
    this.#policy.copied(0);
  }

  /** A new Set of `set`'s members (an empty one made empty). */
  #copy(set: Set<T>): void {
    this.#set = set.size === 0 ? new Set() : new Set(set);
    this.#policy.copied(set.size);
  }

  values(): IterableIterator<T> {
    return this.#set.values();
  }

  [Symbol.iterator](): IterableIterator<T> {
    return this.#set.values();
  }
}
