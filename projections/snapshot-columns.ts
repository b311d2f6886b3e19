/**
 * The ticket index's columns (projections/ticket-index.ts, TicketIndexColumns) as a
 * snapshot's closedIndex (src/events/snapshot-types.ts SnapshotColumn), and back, generically:
 * each field of the columns object is one column named `<field>:<kind>`, the kind saying how
 * to read it back: a typed array's elements as little-endian bytes (`f64`, `u32`, `u8`, ...),
 * a string table (`strings`), or a number (`number`, in `strings` as its decimal). Typed arrays
 * are read back into fresh, aligned buffers (a snapshot's bytes sit at any offset).
 */
import { endianness } from 'node:os';
import { RunlogError } from '../src/errors.ts';
import type { SnapshotSource, SourcedColumn } from '../src/events/snapshot-stream.ts';
import type { SnapshotColumn } from '../src/events/snapshot-types.ts';

type TypedArray = Float64Array | Float32Array | Uint32Array | Int32Array | Uint16Array | Int16Array | Uint8Array | Int8Array;

const KINDS = {
  f64: Float64Array,
  f32: Float32Array,
  u32: Uint32Array,
  i32: Int32Array,
  u16: Uint16Array,
  i16: Int16Array,
  u8: Uint8Array,
  i8: Int8Array,
} as const;

export type Kind = keyof typeof KINDS;

function kindOf(array: TypedArray): Kind {
  for (const [kind, type] of Object.entries(KINDS)) if (array.constructor === type) return kind as Kind;
  throw new Error(`not a typed array a snapshot stores: ${array.constructor.name}`);
}

function requireLittleEndian(): void {
  // Typed arrays are in the host's order; snapshots are little-endian (every host runlog runs on today is).
  if (endianness() !== 'LE') throw new Error('snapshots of ticket index columns need a little-endian host');
}

/** The columns object's fields as snapshot columns. */
export function toSnapshotColumns(columns: object): SnapshotColumn[] {
  requireLittleEndian();
  return Object.entries(columns).map(([field, value]): SnapshotColumn => {
    if (typeof value === 'number') return { name: `${field}:number`, bytes: new Uint8Array(0), strings: [String(value)] };
    if (Array.isArray(value)) return { name: `${field}:strings`, bytes: new Uint8Array(0), strings: value as string[] };
    if (ArrayBuffer.isView(value)) {
      const array = value as TypedArray;
      return { name: `${field}:${kindOf(array)}`, bytes: new Uint8Array(array.buffer, array.byteOffset, array.byteLength), strings: [] };
    }
    throw new Error(`ticket index column ${field} is neither a number, a string table nor a typed array`);
  });
}

/** A typed column as the snapshot holds it: its elements' bytes, at any byte offset (not copied). */
export interface StoredColumn {
  readonly kind: Kind;
  /** Its elements' bytes, or null: they lie elsewhere, read with `copy`. */
  readonly bytes: Uint8Array | null;
  /** Its elements (bytes / the kind's width). */
  readonly length: number;
  /** Copies its bytes from `byteStart` on into `into` (as many as `into` holds). */
  copy(into: Uint8Array, byteStart: number): void;
}

/** The columns object the snapshot columns hold (its fields unchecked: the index's fromColumns checks them). */
export function fromSnapshotColumns(columns: readonly SnapshotColumn[]): Record<string, unknown> {
  const result = storedColumns(columns);
  for (const [field, value] of Object.entries(result)) {
    if (!isStoredColumn(value)) continue;
    const array = new KINDS[value.kind](value.length);
    value.copy(new Uint8Array(array.buffer), 0);
    result[field] = array;
  }
  return result;
}

/**
 * The fields the snapshot columns hold, typed arrays left as their bytes (StoredColumn: no
 * copy, which at millions of rows costs as much as the rest of a restart): for a reader that
 * copies them a stretch at a time (ticket-columns.ts).
 */
export function storedColumns(columns: readonly SnapshotColumn[]): Record<string, unknown> {
  return fieldsOf(
    columns.map(({ name, bytes, strings }) => ({
      name,
      strings,
      byteLength: bytes.byteLength,
      copy: (into: Uint8Array, byteStart: number) => into.set(bytes.subarray(byteStart, byteStart + into.length)),
      bytes,
    })),
  );
}

/**
 * The same, for columns whose bytes lie in a snapshot's source, unread (src/events/snapshot-stream.ts
 * readSnapshotState): each typed column is read from there a stretch at a time as it is loaded.
 */
export function sourcedColumns(columns: readonly SourcedColumn[], source: SnapshotSource): Record<string, unknown> {
  return fieldsOf(
    columns.map(({ name, strings, position, byteLength }) => ({
      name,
      strings,
      byteLength,
      copy: (into: Uint8Array, byteStart: number) => source.read(into, position + byteStart),
      bytes: null,
    })),
  );
}

interface ColumnSource {
  name: string;
  strings: readonly string[];
  byteLength: number;
  copy(into: Uint8Array, byteStart: number): void;
  bytes: Uint8Array | null;
}

function fieldsOf(columns: readonly ColumnSource[]): Record<string, unknown> {
  requireLittleEndian();
  const result: Record<string, unknown> = {};
  for (const { name, strings, byteLength, copy, bytes } of columns) {
    const at = name.lastIndexOf(':');
    const [field, kind] = [name.slice(0, at), name.slice(at + 1)];
    if (at <= 0 || field in result) throw corrupt(`a column named ${JSON.stringify(name)}`);
    if (kind === 'number') {
      result[field] = Number(strings[0]);
    } else if (kind === 'strings') {
      result[field] = strings;
    } else if (Object.hasOwn(KINDS, kind)) {
      const width = KINDS[kind as Kind].BYTES_PER_ELEMENT;
      if (byteLength % width !== 0) throw corrupt(`column ${name} of ${byteLength} bytes`);
      result[field] = { kind: kind as Kind, bytes, length: byteLength / width, copy } satisfies StoredColumn;
    } else {
      throw corrupt(`a column of kind ${JSON.stringify(kind)}`);
    }
  }
  return result;
}

export function isStoredColumn(value: unknown): value is StoredColumn {
  return typeof value === 'object' && value !== null && 'kind' in value && 'copy' in value;
}

function corrupt(what: string): RunlogError {
  return new RunlogError('Corrupt', `the snapshot's ticket index holds ${what}`);
}
