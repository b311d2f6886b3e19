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
 * Sets made ChurnMaps and ChurnSets. (What it still promotes has another cause, not found: a
 * closed loop at twice the rate promotes nothing.)
 *
 * HOW. Before a table would shrink in place (under a quarter of the most it held since it was
 * made), its live entries are copied into a new Map and the old one is dropped whole: nothing
 * links the old table to the new, so no chain starts. A copy costs the entries left (at most a
 * quarter of those deleted since the last copy): amortised O(1) per delete.
 *
 * `map` (or `set`) is the current collection, for reading; a reference to it is good until the
 * next delete, which may replace it.
 */

/** A copy is made once the size falls under the peak divided by this. */
const SHRINK_FACTOR = 4;

export class ChurnMap<K, V> {
  #map = new Map<K, V>();
  #peak = 0;

  /** The current entries (replaced, not changed, by a delete that copies). */
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
    const map = this.#map.set(key, value);
    if (map.size > this.#peak) this.#peak = map.size;
    return this;
  }

  delete(key: K): boolean {
    const map = this.#map;
    if (!map.delete(key)) return false;
    if (map.size * SHRINK_FACTOR < this.#peak) {
      this.#map = map.size === 0 ? new Map() : new Map(map);
      this.#peak = map.size;
    }
    return true;
  }

  clear(): void {
    this.#map = new Map();
    this.#peak = 0;
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
  #peak = 0;

  /** The current members (replaced, not changed, by a delete that copies). */
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
    const set = this.#set.add(value);
    if (set.size > this.#peak) this.#peak = set.size;
    return this;
  }

  delete(value: T): boolean {
    const set = this.#set;
    if (!set.delete(value)) return false;
    if (set.size * SHRINK_FACTOR < this.#peak) {
      this.#set = set.size === 0 ? new Set() : new Set(set);
      this.#peak = set.size;
    }
    return true;
  }

  values(): IterableIterator<T> {
    return this.#set.values();
  }

  [Symbol.iterator](): IterableIterator<T> {
    return this.#set.values();
  }
}
