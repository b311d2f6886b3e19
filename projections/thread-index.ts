/**
 * A partition view's threads, found by tenant then thread name: a small Map of tenants, each
 * with a Map of its threads by name.
 *
 * No Map by thread key (events/keys.ts threadKey) as well: a submission on a new thread would
 * build and hash that key and add it to one more large Map, and the thread's close would delete
 * it again. An add or delete on a Map of tens of thousands of entries waits on memory (its
 * bucket, then each key of the bucket's chain, are cache misses): measured 2026-12-07 with
 * bench/peers/runlog-alone.ts, ~1.1 µs per add to that Map against ~0.4 µs for the by-name add
 * that follows a lookup of the same name, in a submission costing ~10 µs of main-thread CPU in all.
 */
import { ChurnMap } from '../src/churn-map.ts';

/** What the index reads of a thread. */
interface NamedThread {
  readonly tenant: string;
  readonly thread: string;
}

export class ThreadIndex<T extends NamedThread> {
  // Threads come and go in bursts (src/churn-map.ts says why ChurnMaps).
  readonly #byTenant = new ChurnMap<string, ChurnMap<string, T>>();
  #size = 0;

  /** How many threads it holds. */
  get size(): number {
    return this.#size;
  }

  find(tenant: string, thread: string): T | undefined {
    return this.#byTenant.get(tenant)?.get(thread);
  }

  /** Adds `thread`, which it must not hold yet. */
  add(thread: T): void {
    let named = this.#byTenant.get(thread.tenant);
    if (named === undefined) this.#byTenant.set(thread.tenant, (named = new ChurnMap()));
    named.set(thread.thread, thread);
    this.#size++;
  }

  /** Removes `thread`, which it must hold (a thread is removed once, when its last open entry closes). */
  delete(thread: T): void {
    const named = this.#byTenant.get(thread.tenant);
    if (named === undefined || !named.delete(thread.thread)) return;
    this.#size--;
    if (named.size === 0) this.#byTenant.delete(thread.tenant);
  }

  /** Every thread, tenant by tenant. Not to be changed while iterated: copy it first to delete along the way. */
  *values(): IterableIterator<T> {
    for (const named of this.#byTenant.values()) yield* named.values();
  }
}
