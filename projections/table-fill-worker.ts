/**
 * The thread of table-fill-aside.ts: fills the ticket index's tables (table-fill.ts) from the
 * columns of a snapshot's file, read from its descriptor a stretch at a time, and posts their
 * slots back (transferred, not copied).
 */
import { readSync } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import { seqHash } from './hash32.ts';
import type { FilledTable } from './row-table.ts';
import { fillTables, type LoadedRows } from './table-fill.ts';
import type { AsideColumns, FileColumn } from './table-fill-aside.ts';

const { fd, columns } = workerData as { fd: number; columns: AsideColumns };

/** Elements [start, start + into.length) of `column` (elements of `into`'s width) into `into`. */
function read(column: FileColumn, start: number, into: Uint8Array | Uint32Array | Float64Array): void {
  const bytes = new Uint8Array(into.buffer, into.byteOffset, into.byteLength);
  for (let done = 0; done < bytes.length;) {
    const got = readSync(fd, bytes, done, bytes.length - done, column.position + start * into.BYTES_PER_ELEMENT + done);
    if (got === 0) throw new Error('the snapshot ends before its column does');
    done += got;
  }
}

let seqs = new Float64Array(0);
const rows: LoadedRows = {
  rows: columns.seq.byteLength / 8,
  attempts: columns.runHash.byteLength / 4,
  seqHashes(start, into) {
    if (seqs.length < into.length) seqs = new Float64Array(into.length);
    const values = seqs.subarray(0, into.length);
    read(columns.seq, start, values);
    for (let j = 0; j < values.length; j++) into[j] = seqHash(values[j]!);
  },
  states: (start, into) => read(columns.state, start, into),
  keyHashes: (start, into) => read(columns.keyHash, start, into),
  attemptEnds: (start, into) => read(columns.attemptsEnd, start, into),
  runHashes: (start, into) => read(columns.runHash, start, into),
};

const tables = fillTables(rows);
const filled: Record<keyof typeof tables, FilledTable> = {
  bySeq: tables.bySeq.filled,
  byKey: tables.byKey.filled,
  byRun: tables.byRun.filled,
};
parentPort!.postMessage(
  filled,
  Object.values(filled).map((table) => table.slots.buffer as ArrayBuffer),
);
