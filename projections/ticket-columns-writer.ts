/**
 * The ticket index's columns written into a snapshot a stretch of rows at a time, so that
 * snapshotting millions of closed tickets never holds the event loop for long: copying every
 * row into columns, then the columns into the snapshot's buffer, in one turn took 50-160 ms
 * at 500k rows (most of it fresh memory), and every command waited that long.
 *
 * How (src/projector/snapshots.ts saveSnapshot drives it):
 *   1. The index is frozen (ticket-index.ts freeze): a copy that the closes and prunes folded
 *      meanwhile leave alone, made without copying a row.
 *   2. The state is encoded with this as its closedIndex (snapshot-codec.ts ColumnsToWrite):
 *      the compiled writer writes each column's name, its bytes' length and its strings, and
 *      leaves room for its bytes, whose length is known from the row and attempt counts.
 *   3. Each `writeStretch` copies the next STRETCH rows of the copy, in prune order, into
 *      every column's room; the caller yields between calls. Then `release`.
 * If the compiled writer declines the state, avsc encodes `values()`, the columns whole.
 *
 * The columns are toColumns's (ticket-columns.ts), in its order, but for the tenants' numbers:
 * toColumns numbers them in the order the rows first name them, which is known only once every
 * row is read, while the tenant table comes before the rows here; so the tenants some row names
 * (the index counts each one's rows) are numbered in the order of the index's own ids. The
 * index that loads them answers the same.
 */
import type { ColumnsToWrite } from '../src/events/snapshot-codec.ts';
import type { SnapshotColumn } from '../src/events/snapshot-types.ts';
import { MAX_VARINT_BYTES, noRoom, writeString, writeVarint } from '../src/events/body-writer.ts';
import { toSnapshotColumns } from './snapshot-columns.ts';
import { copyRow, emptyColumns, TICKET_INDEX_COLUMNS_VERSION, type RowColumns } from './ticket-columns.ts';
import type { FrozenTicketIndex, TicketIndex } from './ticket-index.ts';

/** Rows copied per writeStretch: about 100 KB of columns, 1-2 ms (5 in code not compiled yet: a snapshot runs it seldom). */
export const STRETCH = 2_048;

/** The typed columns in toColumns's order (TicketIndexColumns), and which count their elements: rows or attempts. */
const TYPED: readonly (readonly [keyof RowColumns, 'rows' | 'attempts'])[] = [
  ['seq', 'rows'],
  ['closedAt', 'rows'],
  ['tenant', 'rows'],
  ['state', 'rows'],
  ['keyHash', 'rows'],
  ['deferredAttempts', 'rows'],
  ['submittedOffset', 'rows'],
  ['closeOffset', 'rows'],
  ['attemptsEnd', 'rows'],
  ['attemptOffset', 'attempts'],
  ['runHash', 'attempts'],
];

/** Where a typed column's elements go in the encoded state. */
interface Room {
  field: keyof RowColumns;
  /** Bytes per element. */
  width: number;
  counts: 'rows' | 'attempts';
  /** Its first byte's position: in the writer's buffer, then (placed) in the encoded state. */
  at: number;
}

export class ClosedColumnsWriting implements ColumnsToWrite {
  readonly #frozen: FrozenTicketIndex;
  readonly #index: TicketIndex;
  readonly #rows: number;
  readonly #attempts: number;
  readonly #nextRows: (max: number) => number[];
  /** Each typed column's room, as last written by writeAvro. */
  #rooms: Room[] = [];
  /** The encoded state whose rooms are filled; null until placed, and when avsc took the columns whole. */
  #encoded: Uint8Array | null = null;
  #wholeTaken = false;
  /** Rows and attempts written so far. */
  #rowsDone = 0;
  #attemptsDone = 0;
  #scratch: RowColumns = emptyColumns(STRETCH, STRETCH);
  /** The tenants some row names, and each tenant id's number among them. */
  readonly #tenants: string[];
  readonly #renumbered: Int32Array;

  /** Freezes `index` now (call it while nothing is in flight: no close unsettled). */
  constructor(index: TicketIndex) {
    this.#frozen = index.freeze();
    this.#index = this.#frozen.index;
    this.#rows = this.#index.size;
    this.#attempts = this.#index.attemptCount;
    this.#nextRows = this.#index.pruneOrder();
    const tenants = this.#index.tenants;
    const live = this.#index.liveTenantIds();
    this.#tenants = live.map((id) => tenants[id]!);
    this.#renumbered = new Int32Array(tenants.length).fill(-1);
    live.forEach((id, n) => (this.#renumbered[id] = n));
  }

  get estimatedBytes(): number {
    let bytes = 1024;
    for (const tenant of this.#tenants) bytes += 3 * tenant.length + MAX_VARINT_BYTES;
    for (const [field, counts] of TYPED)
      bytes += this.#scratch[field].BYTES_PER_ELEMENT * (counts === 'rows' ? this.#rows : this.#attempts);
    return bytes;
  }

  /** The closedIndex array: one block of the version, the tenants and every typed column (names, lengths, strings; elements left to fill), then 0. */
  writeAvro(buf: Buffer, pos: number): number {
    this.#rooms = [];
    if (pos + MAX_VARINT_BYTES > buf.length) return noRoom();
    pos = writeVarint(2 + TYPED.length, buf, pos);
    pos = this.#stringsColumn('version:number', [String(TICKET_INDEX_COLUMNS_VERSION)], buf, pos);
    if (pos >= 0) pos = this.#stringsColumn('tenants:strings', this.#tenants, buf, pos);
    for (const [field, counts] of TYPED) {
      if (pos < 0) return -1;
      const column = this.#scratch[field];
      const width = column.BYTES_PER_ELEMENT;
      const length = width * (counts === 'rows' ? this.#rows : this.#attempts);
      pos = writeString(`${field}:${kindOf(column)}`, buf, pos);
      if (pos < 0) return -1; // declined: writeString said why (room, or a string it does not write)
      if (pos + 2 * MAX_VARINT_BYTES + length > buf.length) return noRoom();
      pos = writeVarint(length, buf, pos);
      this.#rooms.push({ field, width, counts, at: pos });
      pos = writeVarint(0, buf, pos + length); // no strings
    }
    if (pos >= buf.length) return noRoom();
    buf[pos] = 0;
    return pos + 1;
  }

  /** A column with no bytes and `strings` (the array's one block of them, then 0). */
  #stringsColumn(name: string, strings: readonly string[], buf: Buffer, pos: number): number {
    pos = writeString(name, buf, pos);
    if (pos < 0) return -1;
    if (pos + 2 * MAX_VARINT_BYTES > buf.length) return noRoom();
    pos = writeVarint(0, buf, pos); // no bytes
    if (strings.length > 0) {
      pos = writeVarint(strings.length, buf, pos);
      for (const string of strings) {
        pos = writeString(string, buf, pos);
        if (pos < 0) return -1;
      }
    }
    if (pos >= buf.length) return noRoom();
    buf[pos] = 0;
    return pos + 1;
  }

  /** The columns whole (for avsc; toColumns numbers the tenants its own way): nothing is left to fill. */
  values(): SnapshotColumn[] {
    this.#wholeTaken = true;
    return toSnapshotColumns(this.#index.toColumns());
  }

  placed(encoded: Uint8Array, shift: number): void {
    if (this.#wholeTaken) return;
    this.#encoded = encoded;
    for (const room of this.#rooms) room.at -= shift;
  }

  /** Copies the next stretch of rows into the encoded state; false once every row is written (or nothing was left to write). */
  writeStretch(): boolean {
    const encoded = this.#encoded;
    if (encoded === null) return false;
    const rows = this.#nextRows(STRETCH);
    if (rows.length === 0) return false;
    const attempts = rows.reduce((sum, row) => sum + this.#index.attemptsOf(row), 0);
    if (attempts > this.#scratch.attemptOffset.length) this.#scratch = emptyColumns(STRETCH, attempts);
    const scratch = this.#scratch;
    let a = 0;
    for (let i = 0; i < rows.length; i++) {
      const tenant = this.#renumbered[this.#index.tenantIdOf(rows[i]!)]!;
      a = copyRow(this.#index, rows[i]!, tenant, scratch, i, a, this.#attemptsDone);
    }
    for (const { field, width, counts, at } of this.#rooms) {
      const [done, count] = counts === 'rows' ? [this.#rowsDone, rows.length] : [this.#attemptsDone, a];
      encoded.set(new Uint8Array(scratch[field].buffer, 0, count * width), at + done * width);
    }
    this.#rowsDone += rows.length;
    this.#attemptsDone += a;
    return true;
  }

  /** The index may go on without the frozen copy (call it when done, written or not). */
  release(): void {
    this.#frozen.release();
  }
}

function kindOf(column: RowColumns[keyof RowColumns]): string {
  return column instanceof Float64Array ? 'f64' : column instanceof Uint32Array ? 'u32' : 'u8';
}
