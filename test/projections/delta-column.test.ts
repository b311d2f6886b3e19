/**
 * The ticket index's 4-byte columns (projections/delta-column.ts): any float64 integer value
 * reads back as set, whether its difference from its chunk's base fits an Int32 or not, across
 * growth and compaction (property against a plain Map).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { DeltaColumn } from '../../projections/delta-column.ts';

const value = fc.oneof(
  fc.integer({ min: 0, max: 20_000 }),
  fc.integer({ min: -(2 ** 31), max: 2 ** 31 }),
  fc.constantFrom(0, 2 ** 31 - 1, -(2 ** 31), 2 ** 31, 2 ** 53 - 1, 1_700_000_000_000),
);

describe('DeltaColumn', () => {
  it('reads back every value set, near its chunk base or far from it, after growing and compacting', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(value, fc.boolean()), { minLength: 6_000, maxLength: 12_000 }), (steps) => {
        const column = new DeltaColumn(16);
        let [rowBase, capacity] = [0, 16];
        const expected = new Map<number, number>();
        for (const [row, [v, compact]] of steps.entries()) {
          if (row - rowBase >= capacity) column.grow((capacity *= 2));
          column.set(row, row - rowBase, v);
          expected.set(row, v);
          if (compact && row - rowBase > 5_000) {
            // Drop the older half, as the index does once its front is pruned.
            const dropped = Math.floor((row + 1 - rowBase) / 2);
            for (let gone = rowBase; gone < rowBase + dropped; gone++) (column.forget(gone), expected.delete(gone));
            column.compact(rowBase, dropped, row + 1 - rowBase - dropped);
            rowBase += dropped;
          }
        }
        for (const [row, v] of expected) assert.equal(column.get(row, row - rowBase), v, `row ${row}`);
      }),
      { numRuns: 10 },
    );
  });
});
