/**
 * A min-heap (heap.ts) beside a run of items pushed in order: an item that comes out no sooner
 * than the run's last goes at the run's end, any other into the heap. Items offered in take
 * order (a backlog submitted oldest first, one priority: the common case) then cost O(1) to
 * push and to pop, instead of a sift through log2(n) levels of entries spread over the heap.
 * The smallest item is the smaller of the run's first and the heap's top. `before` must be a
 * strict order fixed for an item's life (items are never re-keyed).
 *
 * A popped item is let go at once: its slot in the run is cleared, and an emptied run starts
 * afresh. Before, an item the run still pointed at after its pop lived as long as the slot
 * did: up to 1,024 popped items, each a closed entry's head item and through it the whole
 * entry (a heap snapshot of the Worker at 10,000 submissions a second held 515 closed entries
 * that way, 2026-12-07).
 */
import { Heap } from './heap.ts';

export class OrderedHeap<T> {
  readonly #heap: Heap<T>;
  /** Items in order from `#first` on (those before it were popped, their slots cleared). */
  #run: (T | undefined)[] = [];
  #first = 0;

  constructor(private readonly before: (a: T, b: T) => boolean) {
    this.#heap = new Heap(before);
  }

  get size(): number {
    return this.#heap.size + this.#run.length - this.#first;
  }

  push(item: T): void {
    const run = this.#run;
    if (run.length === this.#first || !this.before(item, run[run.length - 1] as T)) run.push(item);
    else this.#heap.push(item);
  }

  peek(): T | undefined {
    const fromRun = this.#runFirst();
    const fromHeap = this.#heap.peek();
    if (fromRun === undefined) return fromHeap;
    return fromHeap !== undefined && this.before(fromHeap, fromRun) ? fromHeap : fromRun;
  }

  pop(): T | undefined {
    const fromRun = this.#runFirst();
    const fromHeap = this.#heap.peek();
    if (fromRun === undefined || (fromHeap !== undefined && this.before(fromHeap, fromRun))) return this.#heap.pop();
    this.#run[this.#first++] = undefined;
    if (this.#first === this.#run.length) {
      this.#run = [];
      this.#first = 0;
    } else if (this.#first >= 1024 && this.#first * 2 >= this.#run.length) {
      // The cleared slots are dropped once they are half the array (amortised O(1)).
      this.#run = this.#run.slice(this.#first);
      this.#first = 0;
    }
    return fromRun;
  }

  /** Keeps only the items `keep` accepts (O(n)); the run stays in order. */
  retain(keep: (item: T) => boolean): void {
    this.#heap.retain(keep);
    const kept: (T | undefined)[] = [];
    for (let i = this.#first; i < this.#run.length; i++) if (keep(this.#run[i] as T)) kept.push(this.#run[i] as T);
    this.#run = kept;
    this.#first = 0;
  }

  #runFirst(): T | undefined {
    return this.#first < this.#run.length ? this.#run[this.#first] : undefined;
  }
}
