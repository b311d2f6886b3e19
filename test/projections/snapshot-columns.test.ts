/** Ticket index columns as a snapshot stores them, and back: every kind of column round-trips; bad columns are Corrupt. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { isRunlogError } from '../../src/errors.ts';
import { decodeSnapshotState, encodeSnapshotState } from '../../src/events/snapshot-codec.ts';
import { fromSnapshotColumns, toSnapshotColumns } from '../../projections/snapshot-columns.ts';
import { GOLDEN_STATE } from '../events/golden-snapshots.ts';

test('property: columns (numbers, string tables, typed arrays of every kind) round-trip through an encoded snapshot state', () => {
  fc.assert(
    fc.property(
      fc.array(fc.double({ noNaN: true })),
      fc.array(fc.nat({ max: 0xffffffff })),
      fc.uint8Array(),
      fc.array(fc.string()),
      fc.nat(),
      (f64, u32, u8, strings, version) => {
        const columns = { version, tenants: strings, seq: new Float64Array(f64), tenant: new Uint32Array(u32), state: u8 };
        const stored = decodeSnapshotState(encodeSnapshotState({ ...GOLDEN_STATE, closedIndex: toSnapshotColumns(columns) }));
        const back = fromSnapshotColumns(stored.closedIndex);
        assert.deepEqual(back, { ...columns, state: new Uint8Array(u8) });
        assert.equal((back['seq'] as Float64Array).byteOffset % 8, 0);
      },
    ),
    { numRuns: 200 },
  );
});

test('a column of an unknown kind, a ragged typed array or a repeated name is Corrupt', () => {
  for (const columns of [
    [{ name: 'seq:f128', bytes: new Uint8Array(16), strings: [] }],
    [{ name: 'seq:f64', bytes: new Uint8Array(12), strings: [] }],
    [{ name: 'seq', bytes: new Uint8Array(8), strings: [] }],
    [
      { name: 'seq:f64', bytes: new Uint8Array(8), strings: [] },
      { name: 'seq:u8', bytes: new Uint8Array(8), strings: [] },
    ],
  ]) {
    assert.throws(
      () => fromSnapshotColumns(columns),
      (error) => isRunlogError(error, 'Corrupt'),
      JSON.stringify(columns),
    );
  }
});
