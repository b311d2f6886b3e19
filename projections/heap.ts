/** A binary min-heap ordered by `before(a, b)`: true when a comes out first. */
export class Heap<T> {
  private readonly items: T[] = [];

  constructor(private readonly before: (a: T, b: T) => boolean) {}

  get size(): number {
    return this.items.length;
  }

  peek(): T | undefined {
    return this.items[0];
  }

  push(item: T): void {
    this.items.push(item);
    this.siftUp(this.items.length - 1);
  }

  pop(): T | undefined {
    const top = this.items[0];
    const last = this.items.pop();
    if (this.items.length > 0 && last !== undefined) {
      this.items[0] = last;
      this.siftDown(0);
    }
    return top;
  }

  /** Keeps only the items `keep` accepts, in heap order again (O(n)). */
  retain(keep: (item: T) => boolean): void {
    const items = this.items;
    let kept = 0;
    for (const item of items) if (keep(item)) items[kept++] = item;
    items.length = kept;
    for (let i = (kept >> 1) - 1; i >= 0; i--) this.siftDown(i);
  }

  private siftUp(index: number): void {
    const items = this.items;
    const item = items[index] as T;
    while (index > 0) {
      const parentIndex = (index - 1) >> 1;
      const parent = items[parentIndex] as T;
      if (!this.before(item, parent)) break;
      items[index] = parent;
      index = parentIndex;
    }
    items[index] = item;
  }

  private siftDown(index: number): void {
    const items = this.items;
    const length = items.length;
    const item = items[index] as T;
    for (;;) {
      let child = 2 * index + 1;
      if (child >= length) break;
      const right = child + 1;
      if (right < length && this.before(items[right] as T, items[child] as T)) child = right;
      if (!this.before(items[child] as T, item)) break;
      items[index] = items[child] as T;
      index = child;
    }
    items[index] = item;
  }
}
