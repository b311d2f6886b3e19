/**
 * Takeable heads in take order: the two heaps a head index keeps for each of its views (all
 * of one agent's heads, and those of one tenant). A head is either *ready* (takeable now:
 * ordered by priority, higher first, then oldest) or *waiting* until a time: its notBefore
 * (a delay or retry backoff) or the expiry of its lease. Time enters only at query time:
 * `best(now)` first moves every waiting head whose time has come into the ready heap. That
 * move changes no answer, only where the queue keeps the head, so the view stays a pure
 * function of the events.
 *
 * Items are never removed eagerly. Each carries the entry's `version` when it was offered;
 * an entry that changed since (leased, yielded, closed, no longer head) bumps its version,
 * and its old items are dropped when they reach the top (lazy deletion) or by `retain`.
 */
import { Heap } from './heap.ts';
import { OrderedHeap } from './ordered-heap.ts';

/** What the index reads of an entry (EntryState is one; declared here so this file imports no entry). */
export interface IndexedHead {
  readonly tenant: string;
  readonly priority: number;
  readonly submittedAt: number;
  readonly seq: number;
  readonly notBefore: number | null;
  readonly lease: { readonly expiresAt: number } | null;
  /** Bumped on every change that moves the entry in or out of the index. */
  readonly version: number;
  readonly closed: boolean;
}

/** One offer of a head; never changed after, so one item may sit in several queues. */
export interface HeadItem<E extends IndexedHead> {
  readonly entry: E;
  readonly version: number;
  /** When the head becomes takeable: its lease's expiry or its notBefore; null: ready now. */
  readonly at: number | null;
}

/** The take order: higher priority first, then oldest (submission time, then sequence). */
export function takesBefore(x: IndexedHead, y: IndexedHead): boolean {
  if (x.priority !== y.priority) return x.priority > y.priority;
  if (x.submittedAt !== y.submittedAt) return x.submittedAt < y.submittedAt;
  return x.seq < y.seq;
}

export function headItem<E extends IndexedHead>(entry: E): HeadItem<E> {
  const at = entry.lease !== null ? entry.lease.expiresAt : entry.notBefore;
  return new Offer(entry, entry.version, at);
}

/** A class, not a literal: an item points to its entry, and a pretenured literal's dead items would keep entries alive (src/plain-objects.ts). */
class Offer<E extends IndexedHead> implements HeadItem<E> {
  constructor(
    readonly entry: E,
    readonly version: number,
    readonly at: number | null,
  ) {}
}

/** Versions only grow and a closed entry stays closed: an item that is not current never will be again. */
export function isCurrent(item: HeadItem<IndexedHead>): boolean {
  return item.version === item.entry.version && !item.entry.closed;
}

export class HeadQueue<E extends IndexedHead> {
  /** Ready items: most are offered in take order (submitted oldest first), which OrderedHeap serves in O(1). */
  private readonly ready = new OrderedHeap<HeadItem<E>>((a, b) => takesBefore(a.entry, b.entry));
  /** Items with a time (`at` is never null here). */
  private readonly waiting = new Heap<HeadItem<E>>((a, b) => a.at! < b.at!);

  get size(): number {
    return this.ready.size + this.waiting.size;
  }

  push(item: HeadItem<E>): void {
    if (item.at === null) this.ready.push(item);
    else this.waiting.push(item);
  }

  /** The best takeable head at `now`, or undefined. Does not remove it. */
  best(now: number, isHead: (entry: E) => boolean): E | undefined {
    this.promote(now, isHead);
    return this.readyTop(isHead)?.entry;
  }

  /**
   * When the earliest head becomes takeable, or null. A head takeable already answers a time
   * that has passed (when it became so, or its submission): a take that stopped short of it
   * (one bounded by its answer's bytes) learns that it need not wait.
   */
  nextAt(isHead: (entry: E) => boolean): number | null {
    const ready = this.readyTop(isHead);
    if (ready !== undefined) return ready.at ?? ready.entry.submittedAt;
    for (;;) {
      const top = this.waiting.peek();
      if (top === undefined) return null;
      if (isValid(top, isHead)) return top.at!;
      this.waiting.pop();
    }
  }

  /** The top ready item, its stale items above it dropped; undefined when none is ready. */
  private readyTop(isHead: (entry: E) => boolean): HeadItem<E> | undefined {
    for (;;) {
      const top = this.ready.peek();
      if (top === undefined || isValid(top, isHead)) return top;
      this.ready.pop();
    }
  }

  /** Drops every item that is not current (O(size)). */
  retainCurrent(): void {
    this.ready.retain(isCurrent);
    this.waiting.retain(isCurrent);
  }

  private promote(now: number, isHead: (entry: E) => boolean): void {
    for (let top = this.waiting.peek(); top !== undefined && top.at! <= now; top = this.waiting.peek()) {
      this.waiting.pop();
      if (isValid(top, isHead)) this.ready.push(top);
    }
  }
}

function isValid<E extends IndexedHead>(item: HeadItem<E>, isHead: (entry: E) => boolean): boolean {
  return isCurrent(item) && isHead(item.entry);
}
