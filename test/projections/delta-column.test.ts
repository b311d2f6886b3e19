/**
 * The ticket index's 2- or 4-byte columns (projections/delta-column.ts): any float64 value
 * reads back as set, whether its difference from its block's base fits an Int16, an Int32 or
 * neither (a chunk widened from Int16 to Int32 as a difference needs it), across
 * growth and the front's chunks dropped (property against a plain Map); and a column loaded
 * whole (a snapshot's) reads back the same.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { CHUNK } from '../../projections/chunked-column.ts';
import { DeltaColumn } from '../../projections/delta-column.ts';

const value = fc.oneof(
  fc.integer({ min: 0, max: 20_000 }),
  fc.integer({ min: -(2 ** 31), max: 2 ** 31 }),
  fc.constantFrom(
    0,
    2 ** 31 - 1,
    -(2 ** 31),
    2 ** 31,
    2 ** 53 - 1,
    1_700_000_000_000,
    32_767,
    32_768,
    -32_767,
    -32_768,
    -32_769,
    0.5,
    2.25,
  ),
);
/** Rows set this far apart, so a few thousand steps cross several chunks. */
const STRIDE = 37;

describe('DeltaColumn', () => {
  it('reads back every value set, near its block base or far from it, after growing and dropping chunks from the front', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(value, fc.boolean()), { minLength: 6_000, maxLength: 12_000 }), (steps) => {
        const column = new DeltaColumn();
        let rowBase = 0;
        const expected = new Map<number, number>();
        for (const [step, [v, drop]] of steps.entries()) {
          const row = step * STRIDE;
          column.ensure(row - rowBase + 1);
          column.set(row, row - rowBase, v);
          expected.set(row, v);
          if (drop && row - rowBase > 2 * CHUNK) {
            // The front chunk's rows were all removed, as the index drops them once pruned.
            for (const gone of [...expected.keys()].filter((r) => r < rowBase + CHUNK)) (column.forget(gone), expected.delete(gone));
            column.dropFront(1);
            rowBase += CHUNK;
          }
        }
        for (const [row, v] of expected) assert.equal(column.get(row, row - rowBase), v, `row ${row}`);
      }),
      { numRuns: 10 },
    );
  });

  it('loaded a chunk at a time, reads back every value as set one by one would', () => {
    fc.assert(
      fc.property(fc.array(value, { minLength: 0, maxLength: 3 * CHUNK + 5 }), (values) => {
        const column = new DeltaColumn();
        const all = Float64Array.from(values);
        for (let c = 0; c * CHUNK < all.length; c++) column.loadChunk(c, all.subarray(c * CHUNK, (c + 1) * CHUNK));
        for (const [row, v] of values.entries()) assert.equal(column.get(row, row), v, `row ${row}`);
      }),
      { numRuns: 10 },
    );
  });
});
