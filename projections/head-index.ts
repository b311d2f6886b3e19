/**
 * The takeable heads of one agent, in one partition.
 *
 * Only the head of a thread's open entries can be taken (per-thread order). A head is
 * either *ready* (takeable now: ordered by priority, higher first, then oldest) or
 * *waiting* until a time: its notBefore (a delay or retry backoff) or the expiry of
 * its lease. Time enters only at query time: `best(now)` first moves every waiting
 * head whose time has come into the ready heap. That move changes no answer, only
 * where the index keeps the head, so the view stays a pure function of the events.
 *
 * Items are never removed eagerly. Each carries the entry's `version` when it was
 * offered; an entry that changed since (leased, yielded, closed, no longer head) bumps
 * its version, and its old items are dropped when they reach the top (lazy deletion).
 */
import { Heap } from './heap.ts';

/** What the index reads of an entry (EntryState is one; declared here so this file imports no entry). */
export interface IndexedHead {
  readonly priority: number;
  readonly submittedAt: number;
  readonly seq: number;
  readonly notBefore: number | null;
  readonly lease: { readonly expiresAt: number } | null;
  /** Bumped on every change that moves the entry in or out of the index. */
  readonly version: number;
  readonly closed: boolean;
}

interface Item<E extends IndexedHead> {
  entry: E;
  version: number;
  /** For waiting items: when the head becomes takeable. */
  at: number;
}

/** The take order: higher priority first, then oldest (submission time, then sequence). */
export function takesBefore(x: IndexedHead, y: IndexedHead): boolean {
  if (x.priority !== y.priority) return x.priority > y.priority;
  if (x.submittedAt !== y.submittedAt) return x.submittedAt < y.submittedAt;
  return x.seq < y.seq;
}

const MIN_SWEEP_AT = 1024;

function readyBefore(a: Item<IndexedHead>, b: Item<IndexedHead>): boolean {
  return takesBefore(a.entry, b.entry);
}

export class HeadIndex<E extends IndexedHead> {
  /** The agent whose heads this indexes (entries share this string). */
  constructor(readonly agent: string) {}

  private readonly ready = new Heap<Item<E>>(readyBefore);
  private readonly waiting = new Heap<Item<E>>((a, b) => a.at < b.at);
  private sweepAt = MIN_SWEEP_AT;

  /** Items held, current or stale (for tests: stale ones are swept as the heaps grow). */
  get itemCount(): number {
    return this.ready.size + this.waiting.size;
  }

  /** Indexes `entry` as a head in its current state (call after bumping its version). */
  offer(entry: E): void {
    const availableAt = entry.lease !== null ? entry.lease.expiresAt : entry.notBefore;
    const item = { entry, version: entry.version, at: availableAt ?? 0 };
    if (availableAt === null) this.ready.push(item);
    else this.waiting.push(item);
    if (this.ready.size + this.waiting.size >= this.sweepAt) this.sweep();
  }

  /** The best takeable head at `now`, or undefined. Does not remove it. */
  best(now: number, isHead: (entry: E) => boolean): E | undefined {
    this.promote(now, isHead);
    for (;;) {
      const top = this.ready.peek();
      if (top === undefined) return undefined;
      if (isValid(top, isHead)) return top.entry;
      this.ready.pop();
    }
  }

  /** When the earliest waiting head becomes takeable, or null. */
  nextAt(isHead: (entry: E) => boolean): number | null {
    for (;;) {
      const top = this.waiting.peek();
      if (top === undefined) return null;
      if (isValid(top, isHead)) return top.at;
      this.waiting.pop();
    }
  }

  /**
   * Drops items no query would return again (outdated version, closed entry). Without it,
   * items of entries closed before anyone queried stay until they reach the top: every
   * lease leaves one waiting for its expiry, and a replay, which never queries, keeps them
   * all. Sweeping when the heaps have doubled since the last sweep costs O(1) amortised.
   */
  private sweep(): void {
    this.ready.retain(isCurrent);
    this.waiting.retain(isCurrent);
    this.sweepAt = Math.max(MIN_SWEEP_AT, 2 * (this.ready.size + this.waiting.size));
  }

  private promote(now: number, isHead: (entry: E) => boolean): void {
    for (let top = this.waiting.peek(); top !== undefined && top.at <= now; top = this.waiting.peek()) {
      this.waiting.pop();
      if (isValid(top, isHead)) this.ready.push(top);
    }
  }
}

/** Versions only grow and a closed entry stays closed: an item that is not current never will be again. */
function isCurrent(item: Item<IndexedHead>): boolean {
  return item.version === item.entry.version && !item.entry.closed;
}

function isValid<E extends IndexedHead>(item: Item<E>, isHead: (entry: E) => boolean): boolean {
  return item.version === item.entry.version && !item.entry.closed && isHead(item.entry);
}
