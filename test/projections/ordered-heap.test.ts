/**
 * OrderedHeap (the head queues' ready items) pops exactly what a plain sort would, whatever
 * mix of in-order and out-of-order pushes, pops and retains it meets; a backlog pushed in
 * order never reaches its heap; and a popped item is let go at once (nothing of the heap keeps
 * it: the head queues' items hold whole entries).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import fc from 'fast-check';
import { OrderedHeap } from '../../projections/ordered-heap.ts';

interface Item {
  key: number;
  id: number;
}
const before = (a: Item, b: Item): boolean => a.key < b.key || (a.key === b.key && a.id < b.id);

type Op = { kind: 'push'; key: number } | { kind: 'pop' } | { kind: 'retain'; modulo: number };
const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ kind: fc.constant('push' as const), key: fc.integer({ min: 0, max: 40 }) }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('pop' as const) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('retain' as const), modulo: fc.integer({ min: 2, max: 5 }) }) },
);

describe('OrderedHeap', () => {
  it('answers the smallest item at every step, as a sorted array does', () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 3_000 }), (ops) => {
        const heap = new OrderedHeap<Item>(before);
        let model: Item[] = [];
        let id = 0;
        for (const step of ops) {
          if (step.kind === 'push') {
            const item = { key: step.key, id: id++ };
            heap.push(item);
            model.push(item);
            model.sort((a, b) => (before(a, b) ? -1 : 1));
          } else if (step.kind === 'pop') {
            assert.equal(heap.pop(), model.shift());
          } else {
            heap.retain((item) => item.id % step.modulo !== 0);
            model = model.filter((item) => item.id % step.modulo !== 0);
          }
          assert.equal(heap.size, model.length);
          assert.equal(heap.peek(), model[0]);
        }
      }),
      { numRuns: 200 },
    );
  });

  it('pops a long backlog pushed in order, with late out-of-order pushes, in order (past the run letting go of popped items)', () => {
    const heap = new OrderedHeap<Item>(before);
    const popped: number[] = [];
    for (let i = 0; i < 10_000; i++) {
      heap.push({ key: 2 * i + 1, id: i });
      if (i % 3 === 0) popped.push(heap.pop()!.key);
      // Out of order: before the run's last item, into the heap.
      if (i % 1_000 === 999) heap.push({ key: 2 * i - 100, id: 20_000 + i });
    }
    while (heap.size > 0) popped.push(heap.pop()!.key);
    assert.equal(popped.length, 10_010);
    for (let i = 1; i < popped.length; i++) assert.ok(popped[i - 1]! <= popped[i]!, `popped ${popped[i - 1]} before ${popped[i]}`);
    assert.equal(heap.pop(), undefined);
  });

  it('lets a popped item go at once, from a run part-popped and from one popped empty', async () => {
    const heap = new OrderedHeap<Item>(before);
    const pushed = (from: number, to: number): WeakRef<Item>[] =>
      Array.from({ length: to - from }, (_, i) => {
        const item = { key: from + i, id: from + i };
        heap.push(item); // in order: into the run
        return new WeakRef(item);
      });
    const first = pushed(0, 10);
    for (let n = 0; n < 4; n++) heap.pop();
    await collectGarbage();
    assert.deepEqual(
      first.map((ref) => ref.deref() === undefined),
      [true, true, true, true, false, false, false, false, false, false],
      'the 4 popped are gone, the 6 left are held',
    );
    while (heap.size > 0) heap.pop();
    const second = pushed(10, 12); // into a new run
    heap.pop();
    await collectGarbage();
    assert.ok(
      first.every((ref) => ref.deref() === undefined),
      'a run popped empty holds none',
    );
    assert.deepEqual(
      second.map((ref) => ref.deref() === undefined),
      [true, false],
    );
  });
});

/** A full garbage collection, after the current job (a WeakRef holds its target until the job that made it ends). */
async function collectGarbage(): Promise<void> {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  await new Promise((resolve) => setImmediate(resolve));
  gc();
}
