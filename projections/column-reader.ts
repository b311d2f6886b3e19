/**
 * A numeric column of the ticket index read a stretch of elements at a time, for loading an
 * index whole (ticket-index.ts fromColumns): from a typed array (views of it) or from a
 * snapshot's stored column (snapshot-columns.ts StoredColumn: bytes at any offset, or in the
 * snapshot's file, copied a stretch at a time into one scratch array, so a restart never copies a whole column out of
 * the snapshot first: at 10M rows that copy was 600 MB of fresh memory).
 */
import { isStoredColumn, type StoredColumn } from './snapshot-columns.ts';

const TYPES = { f64: Float64Array, u32: Uint32Array, u8: Uint8Array } as const;
type ReadKind = keyof typeof TYPES;
type ArrayOf<K extends ReadKind> = InstanceType<(typeof TYPES)[K]>;

export class ColumnReader<K extends ReadKind> {
  #scratch: ArrayOf<K> | null = null;

  private constructor(
    private readonly kind: K,
    private readonly source: ArrayOf<K> | StoredColumn,
  ) {}

  /** A reader of `value` if it is a column of `kind` (a typed array of that type, or stored as that kind); else null. */
  static of<K extends ReadKind>(value: unknown, kind: K): ColumnReader<K> | null {
    if (value instanceof TYPES[kind]) return new ColumnReader(kind, value as ArrayOf<K>);
    if (isStoredColumn(value) && value.kind === kind) return new ColumnReader(kind, value);
    return null;
  }

  get length(): number {
    return this.source.length;
  }

  /** Elements [start, end): valid until the next read (a view of the typed array, or the scratch array refilled). */
  read(start: number, end: number): ArrayOf<K> {
    const source = this.source;
    if (!isStoredColumn(source)) return source.subarray(start, end) as ArrayOf<K>;
    const type = TYPES[this.kind];
    const count = end - start;
    if (this.#scratch === null || this.#scratch.length < count) this.#scratch = new type(count) as ArrayOf<K>;
    const width = type.BYTES_PER_ELEMENT;
    source.copy(new Uint8Array(this.#scratch.buffer, 0, count * width), start * width);
    return this.#scratch.subarray(0, count) as ArrayOf<K>;
  }
}
