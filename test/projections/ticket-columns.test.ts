/**
 * TicketIndex.fromColumns refuses damaged columns (Corrupt naming what is wrong), whether they
 * come as typed arrays or as a snapshot stores them (their bytes, read a stretch at a time):
 * wrong version, tenants, missing or mistyped columns, wrong lengths, values out of range or
 * out of order, attempts that belong to no row, two rows of one seq. Undamaged, the same
 * columns load and answer every row, across chunks of rows.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isRunlogError } from '../../src/errors.ts';
import { storedColumns, toSnapshotColumns } from '../../projections/snapshot-columns.ts';
import { TicketIndex, type TicketIndexColumns } from '../../projections/ticket-index.ts';

/** Four rows: attempts 1, 0, 2, 1; row 1 keyed; two tenants. */
function columns(): TicketIndexColumns {
  return {
    version: 1,
    tenants: ['t0', 't1'],
    seq: Float64Array.of(5, 3, 9, 12),
    closedAt: Float64Array.of(100, 100, 150, 200),
    tenant: Uint32Array.of(0, 1, 1, 0),
    state: Uint8Array.of(1, 2 | 8, 3, 5),
    keyHash: Uint32Array.of(0, 77, 0, 0),
    deferredAttempts: Uint32Array.of(0, 0, 4, 0),
    submittedOffset: Float64Array.of(10, 11, 12, 13),
    closeOffset: Float64Array.of(20, 21, 2 ** 40, 23),
    attemptsEnd: Uint32Array.of(1, 1, 3, 4),
    attemptOffset: Float64Array.of(15, 16, 17, 18),
    runHash: Uint32Array.of(1, 2, 3, 4),
  };
}

type Damage = [what: string, damage: (c: TicketIndexColumns) => unknown, names: RegExp];

const DAMAGES: Damage[] = [
  ['another version', (c) => (c.version = 2), /version 2/],
  ['tenants not strings', (c) => ((c as { tenants: unknown }).tenants = ['t0', 7]), /tenants/],
  ['a tenant twice', (c) => (c.tenants = ['t0', 't0']), /tenant twice/],
  ['a column missing', (c) => delete (c as Partial<TicketIndexColumns>).closeOffset, /closeOffset/],
  ['a column of another type', (c) => ((c as { tenant: unknown }).tenant = Float64Array.of(0, 1, 1, 0)), /tenant/],
  ['a row column too short', (c) => (c.closedAt = c.closedAt.subarray(0, 3)), /closedAt holds 3/],
  ['an attempt column too long', (c) => (c.runHash = Uint32Array.of(1, 2, 3, 4, 5)), /runHash holds 5/],
  ['a seq not an integer', (c) => (c.seq[2] = 9.5), /seq\[2\] is 9.5/],
  ['a negative seq', (c) => (c.seq[0] = -1), /seq\[0\] is -1/],
  ['a seq NaN', (c) => (c.seq[3] = NaN), /seq\[3\] is NaN/],
  ['two rows of one seq', (c) => (c.seq[3] = 5), /seq 5 is in two rows/],
  ['two rows of one seq, seqs far apart', (c) => (c.seq.set([2 ** 45, 3, 2 ** 45, 12]), undefined), /seq 35184372088832 is in two rows/],
  ['a close time before the one above', (c) => (c.closedAt[2] = 99), /closedAt\[2\] is before/],
  ['a close time not finite', (c) => (c.closedAt[3] = Infinity), /closedAt\[3\] is Infinity/],
  ['a tenant past the list', (c) => (c.tenant[1] = 2), /tenant\[1\] names no tenant/],
  ['no outcome', (c) => (c.state[0] = 0), /state\[0\] is 0/],
  ['an outcome past the last', (c) => (c.state[0] = 6), /state\[0\] is 6/],
  ['a state bit a snapshot never holds', (c) => (c.state[2] = 3 | 16), /state\[2\] is 19/],
  ['a key hash on a row with no key', (c) => (c.keyHash[0] = 9), /keyHash\[0\] is 9/],
  ['a negative offset', (c) => (c.submittedOffset[1] = -4), /submittedOffset\[1\] is -4/],
  ['a close offset NaN', (c) => (c.closeOffset[0] = NaN), /closeOffset\[0\] is NaN/],
  ['a close before its Submitted', (c) => (c.submittedOffset[3] = 30), /closeOffset\[3\] is not after submittedOffset\[3\]/],
  ['attempt ends going down', (c) => (c.attemptsEnd[1] = 0), /attemptsEnd\[1\] is 0/],
  ['attempt ends past the attempts', (c) => (c.attemptsEnd[3] = 5), /attemptsEnd\[3\] is 5/],
  ['attempts of no row', (c) => (c.attemptsEnd[3] = 3), /1 attempts belong to no row/],
  ['an attempt offset out of range', (c) => (c.attemptOffset[2] = 2 ** 60), /attemptOffset\[2\]/],
];

/** The columns as a restart finds them: encoded as a snapshot stores them, their typed arrays left as bytes. */
function stored(c: TicketIndexColumns): Readonly<Record<string, unknown>> {
  return storedColumns(toSnapshotColumns(c));
}

describe('TicketIndex.fromColumns: damaged columns', () => {
  for (const [what, damage, names] of DAMAGES) {
    for (const [form, as] of [
      ['typed arrays', (c: TicketIndexColumns) => c],
      ['stored bytes', stored],
    ] as const) {
      it(`${what} (${form}): Corrupt`, () => {
        const damaged = columns();
        damage(damaged);
        assert.throws(
          () => TicketIndex.fromColumns(as(damaged)),
          (error) => isRunlogError(error, 'Corrupt') && names.test(error.message),
        );
      });
    }
  }

  it('a record offset at or past what the snapshot covers (offsetsBelow): Corrupt, in either form', () => {
    for (const form of [columns(), stored(columns())]) {
      assert.throws(
        () => TicketIndex.fromColumns(form, 2 ** 40),
        (error) => isRunlogError(error, 'Corrupt') && /closeOffset\[2\] is 1099511627776/.test(error.message),
      );
      assert.equal(TicketIndex.fromColumns(form, 2 ** 40 + 1).size, 4);
    }
  });

  it('undamaged, in either form, every row answers as the columns say', () => {
    for (const index of [TicketIndex.fromColumns(columns()), TicketIndex.fromColumns(stored(columns()))]) {
      const c = columns();
      assert.equal(index.size, 4);
      for (let i = 0; i < 4; i++) {
        const row = index.rowOf(c.seq[i]!);
        const first = i === 0 ? 0 : c.attemptsEnd[i - 1]!;
        assert.deepEqual(
          [index.tenantOf(row), index.closedAtOf(row), index.deferredAttemptsOf(row), index.recordsOf(row), index.runHashesOf(row)],
          [
            c.tenants[c.tenant[i]!],
            c.closedAt[i],
            c.deferredAttempts[i],
            {
              submittedOffset: c.submittedOffset[i],
              closeOffset: c.closeOffset[i],
              attemptOffsets: [...c.attemptOffset.subarray(first, c.attemptsEnd[i])],
            },
            [...c.runHash.subarray(first, c.attemptsEnd[i])],
          ],
          `row of seq ${c.seq[i]}`,
        );
      }
      assert.deepEqual(index.rowsByKey(77), [index.rowOf(3)]);
      assert.deepEqual(index.rowsByRun(3), [index.rowOf(9)]);
      assert.deepEqual(index.toColumns(), columns());
    }
  });

  it('across chunks of rows, from stored bytes: 150,000 rows (some with no attempt, some with two) read back and turn back into the same columns', () => {
    const n = 150_000;
    const attempts = (i: number): number => (i % 5 === 0 ? 0 : i % 7 === 0 ? 2 : 1);
    let m = 0;
    const attemptsEnd = Uint32Array.from({ length: n }, (_, i) => (m += attempts(i)));
    const c: TicketIndexColumns = {
      version: 1,
      tenants: Array.from({ length: 300 }, (_, t) => `tenant-${t}`),
      seq: Float64Array.from({ length: n }, (_, i) => (i % 2 === 0 ? i + 1 : n * 3 - i)),
      closedAt: Float64Array.from({ length: n }, (_, i) => 1_700_000_000_000 + i * 2 ** 19),
      tenant: Uint32Array.from({ length: n }, (_, i) => i % 300), // tenants first named in order, as toColumns numbers them
      state: Uint8Array.from({ length: n }, (_, i) => (i % 3 === 0 ? 1 | 8 : 2)),
      keyHash: Uint32Array.from({ length: n }, (_, i) => (i % 3 === 0 ? (i * 2654435761) >>> 0 || 1 : 0)),
      deferredAttempts: Uint32Array.from({ length: n }, (_, i) => i % 11),
      submittedOffset: Float64Array.from({ length: n }, (_, i) => i * 4),
      closeOffset: Float64Array.from({ length: n }, (_, i) => i * 4 + (i % 9 === 0 ? 2 ** 33 : 3)),
      attemptsEnd,
      attemptOffset: Float64Array.from({ length: m }, (_, a) => a * 2 + 1),
      runHash: Uint32Array.from({ length: m }, (_, a) => (a * 40503) >>> 0),
    };
    const index = TicketIndex.fromColumns(stored(c));
    assert.equal(index.size, n);
    for (let i = 0; i < n; i += 997) assert.equal(index.seqOf(index.rowOf(c.seq[i]!)), c.seq[i]);
    assert.deepEqual(index.toColumns(), c);
  });
});
