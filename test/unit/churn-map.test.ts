/**
 * ChurnMap and ChurnSet (src/churn-map.ts) answer as a plain Map and Set do, in the same
 * order, whatever mix of sets, deletes and clears they meet; a delete that leaves fewer than a
 * quarter of the most entries held since the last copy replaces the collection with a copy
 * (what keeps V8 from shrinking the table in place), and so does the set (or add) of a new key
 * that makes twice the size, and at least 32, since the last copy (what keeps a churning table
 * young); so does the delete of the last key, which replaces it with a new empty one, the old one
 * left as it was (V8 would make a new table for it anyway); nothing else does.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { ChurnMap, ChurnSet } from '../../src/churn-map.ts';

type Op = { kind: 'set'; key: number; value: number } | { kind: 'delete'; key: number } | { kind: 'clear' };
const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ kind: fc.constant('set' as const), key: fc.integer({ min: 0, max: 300 }), value: fc.integer() }) },
  { weight: 6, arbitrary: fc.record({ kind: fc.constant('delete' as const), key: fc.integer({ min: 0, max: 300 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('clear' as const) }) },
);
// Bursts: many sets, then many deletes, so that the collections grow and shrink by more than 4x.
const bursts = fc.array(fc.oneof(op, fc.array(op, { minLength: 50, maxLength: 200 })), { maxLength: 60 }).map((ops) => ops.flat());

describe('ChurnMap', () => {
  it('answers as a Map does, in the same order, through growing and shrinking bursts', () => {
    fc.assert(
      fc.property(bursts, (ops) => {
        const churn = new ChurnMap<number, number>();
        const model = new Map<number, number>();
        for (const step of ops) {
          if (step.kind === 'set') {
            churn.set(step.key, step.value);
            model.set(step.key, step.value);
          } else if (step.kind === 'delete') {
            assert.equal(churn.delete(step.key), model.delete(step.key));
          } else {
            churn.clear();
            model.clear();
          }
          assert.equal(churn.size, model.size);
        }
        assert.deepEqual([...churn.map], [...model]);
        assert.deepEqual([...churn.values()], [...model.values()]);
        for (let key = 0; key <= 300; key++) {
          assert.equal(churn.has(key), model.has(key));
          assert.equal(churn.get(key), model.get(key));
        }
      }),
    );
  });

  it('copies into a new Map once a delete leaves under a quarter of the peak, and not before', () => {
    const churn = new ChurnMap<string, number>();
    for (let n = 0; n < 100; n++) churn.set(`k${n}`, n);
    const before = churn.map;
    for (let n = 0; n < 75; n++) churn.delete(`k${n}`); // 25 left: a quarter of 100, not under it
    assert.equal(churn.map, before);
    churn.delete('k75'); // 24 left
    assert.notEqual(churn.map, before, 'replaced by a copy');
    assert.deepEqual(
      [...churn.map.keys()],
      Array.from({ length: 24 }, (_, i) => `k${76 + i}`),
    );
    assert.equal(before.size, 24, 'the old Map had the delete too, and is no longer written');
    churn.set('late', 1);
    assert.equal(before.has('late'), false);
    // The copy's peak is its size, raised by later sets (25 with 'late'): the next copy comes under a quarter of that.
    const copy = churn.map;
    for (let n = 76; n < 94; n++) churn.delete(`k${n}`); // 7 left (6 k's and 'late'): 28 is not under 25
    assert.equal(churn.map, copy);
    churn.delete('k94'); // 6 left: 24 is under 25
    assert.notEqual(churn.map, copy);
  });

  it('copies into a new Map after twice its size (at least 32) in sets of new keys, a set of a key it holds not counted', () => {
    const churn = new ChurnMap<string, number>();
    for (let n = 0; n < 10; n++) churn.set(`k${n}`, n); // 10 new keys since it was made
    const before = churn.map;
    churn.set('k0', 100); // held already: not counted
    // Steady churn at 10 entries: one deleted, one new set, 21 times: 31 new keys.
    for (let n = 10; n < 31; n++) {
      churn.delete(`k${n - 10}`);
      churn.set(`k${n}`, n);
    }
    assert.equal(churn.map, before);
    churn.delete('k21');
    churn.set('k31', 31); // the 32nd
    assert.notEqual(churn.map, before, 'replaced by a copy');
    assert.deepEqual(
      [...churn.map.keys()],
      Array.from({ length: 10 }, (_, i) => `k${22 + i}`),
    );
    assert.equal(before.has('k31'), true, 'the old Map had the set too, and is no longer written');
    // Counted afresh from the copy. Grown to 40 entries (30 new keys), then churned at 40: a copy
    // at twice the size, 80 new keys since the last.
    const copy = churn.map;
    for (let n = 32; n < 62; n++) churn.set(`k${n}`, n);
    for (let n = 62; n < 111; n++) {
      churn.delete(`k${n - 40}`);
      churn.set(`k${n}`, n);
    }
    assert.equal(churn.size, 40);
    assert.equal(churn.map, copy, '79 new keys');
    churn.delete('k71');
    churn.set('k111', 111);
    assert.notEqual(churn.map, copy, 'the 80th');
  });

  it('a delete of a missing key changes nothing', () => {
    const churn = new ChurnMap<number, string>();
    churn.set(1, 'a');
    const map = churn.map;
    assert.equal(churn.delete(2), false);
    assert.equal(churn.map, map);
    assert.equal(churn.delete(1), true);
    assert.equal(churn.size, 0);
  });

  it('the delete of its last key replaces it with a new empty Map, the old one left holding the key', () => {
    const churn = new ChurnMap<string, number>();
    churn.set('a', 1);
    churn.set('b', 2);
    churn.delete('a');
    const last = churn.map;
    assert.equal(churn.delete('b'), true);
    assert.notEqual(churn.map, last, 'a new Map');
    assert.equal(churn.size, 0);
    assert.deepEqual([...last], [['b', 2]], 'the old Map is no longer written');
    churn.set('c', 3);
    assert.deepEqual([...churn.map], [['c', 3]]);
    assert.equal(last.has('c'), false);
  });
});

describe('ChurnSet', () => {
  it('answers as a Set does, in the same order, through growing and shrinking bursts', () => {
    fc.assert(
      fc.property(bursts, (ops) => {
        const churn = new ChurnSet<number>();
        const model = new Set<number>();
        for (const step of ops) {
          if (step.kind === 'set') {
            churn.add(step.key);
            model.add(step.key);
          } else if (step.kind === 'delete') {
            assert.equal(churn.delete(step.key), model.delete(step.key));
          }
          assert.equal(churn.size, model.size);
        }
        assert.deepEqual([...churn], [...model]);
        assert.deepEqual([...churn.set], [...model]);
        for (let key = 0; key <= 300; key++) assert.equal(churn.has(key), model.has(key));
      }),
    );
  });

  it('copies into a new Set once a delete leaves under a quarter of the peak', () => {
    const churn = new ChurnSet<number>();
    for (let n = 0; n < 8; n++) churn.add(n);
    const before = churn.set;
    for (let n = 0; n < 6; n++) churn.delete(n);
    assert.equal(churn.set, before);
    churn.delete(6);
    assert.notEqual(churn.set, before);
    assert.deepEqual([...churn], [7]);
  });

  it('the delete of its last member replaces it with a new empty Set, the old one left holding it', () => {
    const churn = new ChurnSet<number>();
    churn.add(1);
    const last = churn.set;
    assert.equal(churn.delete(2), false);
    assert.equal(churn.set, last, 'a missing member changes nothing');
    assert.equal(churn.delete(1), true);
    assert.notEqual(churn.set, last);
    assert.equal(churn.size, 0);
    assert.deepEqual([...last], [1]);
    churn.add(3);
    assert.deepEqual([...churn], [3]);
  });

  it('copies into a new Set after twice its size (at least 32) in adds of new members', () => {
    const churn = new ChurnSet<number>();
    for (let n = 0; n < 4; n++) churn.add(n);
    const before = churn.set;
    churn.add(0); // held already: not counted
    for (let n = 4; n < 31; n++) {
      churn.delete(n - 4);
      churn.add(n);
    }
    assert.equal(churn.set, before);
    churn.delete(27);
    churn.add(31); // the 32nd
    assert.notEqual(churn.set, before);
    assert.deepEqual([...churn], [28, 29, 30, 31]);
  });
});
