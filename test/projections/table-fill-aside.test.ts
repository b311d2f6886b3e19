/**
 * The ticket index's tables filled on a thread of their own from a snapshot's file
 * (projections/table-fill-aside.ts) while the index loads its columns with its tables 'later':
 * the thread's tables are the main thread's, slot for slot, and the index answers every lookup
 * as one that filled its own. Tables that are not its rows', or none (the thread failed: here, a
 * file that ends before its columns), and the index fills its own. No lookup before the tables come.
 * Real files and a real worker thread.
 */
import assert from 'node:assert/strict';
import { closeSync, openSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { it, type TestContext } from 'node:test';
import fc from 'fast-check';
import { seqHash } from '../../projections/hash32.ts';
import { fillTablesAside } from '../../projections/table-fill-aside.ts';
import { fillTables, type IndexTables } from '../../projections/table-fill.ts';
import { TicketIndex, type TicketIndexColumns } from '../../projections/ticket-index.ts';
import { toSnapshotColumns } from '../../projections/snapshot-columns.ts';
import type { SourcedColumn } from '../../src/events/snapshot-stream.ts';
import { onCleanup, scratchDir } from '../support/cleanup.ts';

interface Row {
  keyHash: number | null;
  runHashes: number[];
}

const rowsArbitrary = fc.array(
  fc.record({
    keyHash: fc.option(fc.integer({ min: 0, max: 9 }), { nil: null }),
    runHashes: fc.array(fc.integer({ min: 0, max: 9 }), { maxLength: 3 }),
  }),
  { minLength: 1, maxLength: 300 },
);

/** An index of `rows` (seqs shuffled a little: not in close order), and its columns. */
function indexOf(rows: readonly Row[]): { index: TicketIndex; columns: TicketIndexColumns } {
  const index = new TicketIndex();
  rows.forEach((row, i) => {
    const seq = i % 2 === 0 ? i + 2 : i; // 2, 1, 4, 3, ...
    const base = i * 10;
    index.add(
      {
        seq: seq,
        tenant: `t${i % 3}`,
        outcome: 'succeeded',
        closedAt: 1000 + i,
        keyHash: row.keyHash,
        runHashes: row.runHashes,
        deferredAttempts: 0,
      },
      { submittedOffset: base, closeOffset: base + 9, attemptOffsets: row.runHashes.map((_, n) => base + 1 + n) },
    );
  });
  return { index, columns: index.toColumns() };
}

/** The columns written to a file as a snapshot holds them (at some offset), open: its descriptor and where each lies. */
function written(t: TestContext, dir: string, columns: TicketIndexColumns): { fd: number; sourced: SourcedColumn[] } {
  const path = join(dir, `columns-${Math.random().toString(36).slice(2)}`);
  const parts: Uint8Array[] = [new Uint8Array(7)]; // columns start at an odd offset, as in a snapshot
  let position = 7;
  const sourced = toSnapshotColumns(columns).map(({ name, bytes, strings }): SourcedColumn => {
    parts.push(bytes);
    const column = { name, strings, position, byteLength: bytes.byteLength };
    position += bytes.byteLength;
    return column;
  });
  writeFileSync(path, Buffer.concat(parts));
  const fd = openSync(path, 'r');
  onCleanup(t, () => closeSync(fd));
  return { fd, sourced };
}

/** The tables the main thread fills from `columns` (the code the index runs). */
function filledHere(columns: TicketIndexColumns): IndexTables {
  const rows = columns.seq.length;
  return fillTables({
    rows,
    attempts: columns.runHash.length,
    seqHashes: (start, into) => into.forEach((_, j) => (into[j] = seqHash(columns.seq[start + j]!))),
    states: (start, into) => into.set(columns.state.subarray(start, start + into.length)),
    keyHashes: (start, into) => into.set(columns.keyHash.subarray(start, start + into.length)),
    attemptEnds: (start, into) => into.set(columns.attemptsEnd.subarray(start, start + into.length)),
    runHashes: (start, into) => into.set(columns.runHash.subarray(start, start + into.length)),
  });
}

/** Every lookup of `index` answers as `expected`'s: by seq, by key hash, by run-id hash. */
function answersAs(index: TicketIndex, expected: TicketIndex, rows: number): void {
  for (let seq = 0; seq <= rows + 2; seq++) assert.equal(index.rowOf(seq), expected.rowOf(seq), `seq ${seq}`);
  for (let hash = 0; hash < 10; hash++) {
    assert.deepEqual(index.rowsByKey(hash), expected.rowsByKey(hash), `key hash ${hash}`);
    assert.deepEqual(index.rowsByRun(hash), expected.rowsByRun(hash), `run hash ${hash}`);
  }
}

it("fills the index's tables on a thread of their own from the snapshot's file: slot for slot the main thread's, and every lookup the same", async (t) => {
  const dir = await scratchDir(t, 'runlog-table-fill-aside-');
  await fc.assert(
    fc.asyncProperty(rowsArbitrary, async (rows) => {
      const { columns } = indexOf(rows);
      const { fd, sourced } = written(t, dir, columns);
      const aside = fillTablesAside(fd, sourced, 0);
      assert.ok(aside !== null, 'a thread was started (this machine has more than one core)');
      const tables = await aside.tables;
      assert.ok(tables !== null, 'the thread filled the tables');
      const here = filledHere(columns);
      for (const name of ['bySeq', 'byKey', 'byRun'] as const) {
        assert.deepEqual(tables[name].filled, here[name].filled, name);
      }
      const later = TicketIndex.fromColumns(columns, Number.POSITIVE_INFINITY, 'later');
      assert.throws(() => later.rowOf(1), /before its tables were filled/);
      later.adoptTables(tables);
      answersAs(later, TicketIndex.fromColumns(columns), rows.length);
    }),
    { numRuns: 15 },
  );
});

it('tables that are not its rows, or none (the thread failed), and the index fills its own', async (t) => {
  const dir = await scratchDir(t, 'runlog-table-fill-aside-');
  const { columns } = indexOf(Array.from({ length: 50 }, (_, i) => ({ keyHash: i % 4 === 0 ? i % 10 : null, runHashes: [i % 10] })));
  const { columns: other } = indexOf([{ keyHash: 1, runHashes: [2, 3] }]);
  const expected = TicketIndex.fromColumns(columns);

  const wrong = TicketIndex.fromColumns(columns, Number.POSITIVE_INFINITY, 'later');
  wrong.adoptTables(filledHere(other));
  answersAs(wrong, expected, 50);

  // A file that ends before the columns it is said to hold: the thread fails, and says so by no tables.
  const { sourced } = written(t, dir, columns);
  const path = join(dir, 'too-short');
  writeFileSync(path, 'abc');
  const fd = openSync(path, 'r');
  onCleanup(t, () => closeSync(fd));
  const aside = fillTablesAside(fd, sourced, 0);
  assert.ok(aside !== null);
  assert.equal(await aside.tables, null);
  await aside.cancel();
  const none = TicketIndex.fromColumns(columns, Number.POSITIVE_INFINITY, 'later');
  none.adoptTables(null);
  answersAs(none, expected, 50);
  assert.throws(() => none.adoptTables(null), /has its tables already/);
});

it('no thread for an index under the least rows, or for columns that are not all there', async (t) => {
  const dir = await scratchDir(t, 'runlog-table-fill-aside-');
  const { columns } = indexOf([{ keyHash: null, runHashes: [1] }]);
  const { fd, sourced } = written(t, dir, columns);
  assert.equal(fillTablesAside(fd, sourced, 2), null, 'one row, under 2');
  assert.equal(
    fillTablesAside(
      fd,
      sourced.filter((column) => column.name !== 'runHash:u32'),
      0,
    ),
    null,
  );
});
