/**
 * The ticket index's three tables (ticket-index.ts: by seq, by submission-key hash, by run-id
 * hash) filled whole for freshly loaded rows 0..n-1, row r's tag r + 1, each by RowTable.fill.
 * The same code fills them on the main thread as a load ends, or, for a large snapshot in a
 * file, on a thread of its own while the main thread loads the columns (table-fill-aside.ts):
 * from the same rows, the same tables, slot for slot.
 */
import { FillScratch, RowTable } from './row-table.ts';
import { KEYED } from './ticket-flags.ts';

/** What the tables are filled from: loaded rows 0..rows-1 and their attempts, in row order. */
export interface LoadedRows {
  readonly rows: number;
  readonly attempts: number;
  /** The seq hashes (hash32.ts seqHash) of rows [start, start + into.length), into `into`. */
  seqHashes(start: number, into: Uint32Array): void;
  /** Each row's state bits (ticket-flags.ts), rows [start, start + into.length). */
  states(start: number, into: Uint8Array): void;
  /** Each row's key hash, rows [start, start + into.length). */
  keyHashes(start: number, into: Uint32Array): void;
  /** Each row's attempts' end (cumulative: row r's attempts end where row r + 1's begin), rows [start, start + into.length). */
  attemptEnds(start: number, into: Uint32Array): void;
  /** The run hashes of attempts [start, start + into.length). */
  runHashes(start: number, into: Uint32Array): void;
}

export interface IndexTables {
  bySeq: RowTable;
  byKey: RowTable;
  byRun: RowTable;
}

/** Rows read at a time. */
const STRETCH = 65_536;

/** The three tables of `rows`. */
export function fillTables(rows: LoadedRows): IndexTables {
  const scratch = new FillScratch();
  const tables: IndexTables = { bySeq: new RowTable(), byKey: new RowTable(), byRun: new RowTable() };
  tables.bySeq.fill(rows.rows, (start, into) => rows.seqHashes(start, into), null, scratch);
  const byKey = keyedRows(rows);
  tables.byKey.fill(byKey.tags.length, (start, into) => into.set(byKey.hashes.subarray(start, start + into.length)), byKey.tags, scratch);
  tables.byRun.fill(rows.attempts, (start, into) => rows.runHashes(start, into), runTags(rows), scratch);
  return tables;
}

/** The keyed rows' tags (row + 1) and key hashes, in row order. */
function keyedRows(rows: LoadedRows): { tags: Uint32Array; hashes: Uint32Array } {
  const tags: number[] = [];
  const hashes: number[] = [];
  const [states, keyHashes] = [new Uint8Array(STRETCH), new Uint32Array(STRETCH)];
  for (let start = 0; start < rows.rows; start += STRETCH) {
    const length = Math.min(STRETCH, rows.rows - start);
    rows.states(start, states.subarray(0, length));
    let read = false; // the stretch's key hashes, read once it has a keyed row (most rows have no key)
    for (let j = 0; j < length; j++) {
      if ((states[j]! & KEYED) === 0) continue;
      if (!read) rows.keyHashes(start, keyHashes.subarray(0, length));
      read = true;
      tags.push(start + j + 1);
      hashes.push(keyHashes[j]!);
    }
  }
  return { tags: Uint32Array.from(tags), hashes: Uint32Array.from(hashes) };
}

/** Each attempt's row + 1; null when every row has one attempt (attempt k is row k's: RowTable.fill's own k + 1). */
function runTags(rows: LoadedRows): Uint32Array | null {
  const ends = new Uint32Array(STRETCH);
  let tags: Uint32Array | null = null;
  let next = 0; // the first attempt not tagged yet
  for (let start = 0; start < rows.rows; start += STRETCH) {
    const length = Math.min(STRETCH, rows.rows - start);
    rows.attemptEnds(start, ends.subarray(0, length));
    for (let j = 0; j < length; j++) {
      const [row, end] = [start + j, ends[j]!];
      if (tags === null) {
        if (end === row + 1) {
          next = end; // one attempt each so far
          continue;
        }
        tags = Uint32Array.from({ length: rows.attempts }, (_, k) => k + 1);
      }
      for (; next < end; next++) tags[next] = row + 1;
    }
  }
  return tags;
}
