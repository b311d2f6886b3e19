/**
 * OrderedHeap (the head queues' ready items) pops exactly what a plain sort would, whatever
 * mix of in-order and out-of-order pushes, pops and retains it meets; and a backlog pushed in
 * order never reaches its heap.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
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
});
