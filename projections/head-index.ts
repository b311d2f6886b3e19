/**
 * The takeable heads of one agent, in one partition: all of them, and the same heads by
 * tenant (head-queue.ts says how each queue orders and drops them).
 *
 * Only the head of a thread's open entries can be taken (per-thread order). A take of the
 * agent for any tenant asks `all`; a take filtered by tenants asks each named tenant's queue,
 * so it never walks the heads of other tenants: one tenant's backlog of a million heads
 * costs a filtered take of another tenant nothing. Each offer is one item pushed into both
 * queues (the same object: one more heap slot per offer, not a copy). Keeping only per-tenant
 * queues would make an unfiltered take visit every tenant; keeping only `all` would make a
 * filtered one skip over every other tenant's heads.
 *
 * Stale items (an entry leased, yielded, closed or no longer head since it was offered) are
 * dropped lazily by queries, and all together by a sweep once as many items were offered
 * since the last sweep as were current after it (at least MIN_SWEEP_AT): O(1) amortised per
 * offer, and a queue nobody queries (a replay queries none; a tenant no filtered take names)
 * holds at most about twice the heads that were current at the last sweep. The sweep also
 * forgets tenants with no current head.
 */
import { HeadQueue, headItem, takesBefore, type IndexedHead } from './head-queue.ts';

export { takesBefore, type IndexedHead } from './head-queue.ts';

const MIN_SWEEP_AT = 1024;

export class HeadIndex<E extends IndexedHead> {
  /** The agent whose heads this indexes (entries share this string). */
  constructor(readonly agent: string) {}

  private readonly all = new HeadQueue<E>();
  private readonly byTenant = new Map<string, HeadQueue<E>>();
  private offeredSinceSweep = 0;
  private sweepAfter = MIN_SWEEP_AT;

  /** Items held in every queue, current or stale (for tests: stale ones are swept as offers go on). */
  get itemCount(): number {
    let count = this.all.size;
    for (const queue of this.byTenant.values()) count += queue.size;
    return count;
  }

  /** Tenants with a queue (for tests: the sweep forgets those without a current head). */
  get tenantCount(): number {
    return this.byTenant.size;
  }

  /** Indexes `entry` as a head in its current state (call after bumping its version). */
  offer(entry: E): void {
    const item = headItem(entry);
    this.all.push(item);
    let queue = this.byTenant.get(entry.tenant);
    if (queue === undefined) {
      queue = new HeadQueue();
      this.byTenant.set(entry.tenant, queue);
    }
    queue.push(item);
    if (++this.offeredSinceSweep >= this.sweepAfter) this.sweep();
  }

  /** The best takeable head at `now` of `tenants` (null: of any tenant), or undefined. Does not remove it. */
  best(now: number, isHead: (entry: E) => boolean, tenants: readonly string[] | null): E | undefined {
    if (tenants === null) return this.all.best(now, isHead);
    let best: E | undefined;
    for (const tenant of tenants) {
      const candidate = this.byTenant.get(tenant)?.best(now, isHead);
      if (candidate !== undefined && (best === undefined || takesBefore(candidate, best))) best = candidate;
    }
    return best;
  }

  /** When the earliest head of `tenants` (null: of any tenant) becomes takeable (HeadQueue.nextAt), or null. */
  nextAt(isHead: (entry: E) => boolean, tenants: readonly string[] | null): number | null {
    if (tenants === null) return this.all.nextAt(isHead);
    let earliest: number | null = null;
    for (const tenant of tenants) {
      const at = this.byTenant.get(tenant)?.nextAt(isHead) ?? null;
      if (at !== null && (earliest === null || at < earliest)) earliest = at;
    }
    return earliest;
  }

  /** Drops every stale item of every queue, and the queues of tenants left without one (see the top). */
  private sweep(): void {
    this.all.retainCurrent();
    for (const [tenant, queue] of this.byTenant) {
      queue.retainCurrent();
      if (queue.size === 0) this.byTenant.delete(tenant);
    }
    this.offeredSinceSweep = 0;
    this.sweepAfter = Math.max(MIN_SWEEP_AT, this.all.size);
  }
}
