/**
 * Skipping an Avro value without decoding it: the length of a schema's encoding found by
 * walking its bytes (varints, length-prefixed bytes and strings, array and map blocks), no value
 * built. The snapshot reader (snapshot-stream.ts) uses it to find where the ticket index's
 * columns lie in a snapshot's state without reading the fields before them into objects.
 *
 * A cursor is read byte by byte (`byte`) and skipped over (`skip`); running out of input is the
 * cursor's to report (it throws). A varint of more than 10 bytes, or a negative length, is
 * Corrupt here. Every item of an array or map is walked, even in a block that gives its byte
 * size (then the size must match): so a walk that ends within the bytes bounds every count in
 * them, and a decoder that believes counts (avsc does) can be handed only walked bytes.
 */
import { RunlogError } from '../errors.ts';

export interface ByteCursor {
  /** Where the next byte is read from. */
  readonly position: number;
  /** The next byte (throws past the end). */
  byte(): number;
  /** Moves past `count` bytes (throws past the end). */
  skip(count: number): void;
}

export type Skip = (cursor: ByteCursor) => void;

/** One skipper per field of the record `schema`, in order (named types defined in a field resolve in the later ones). */
export function avroFieldSkippers(schema: { namespace?: string; fields: readonly { type: unknown }[] }): Skip[] {
  const named = new Map<string, Skip>();
  return schema.fields.map((field) => compile(field.type, named, schema.namespace ?? ''));
}

/** A zigzag varint (int or long) as a number (exact up to 2^53). */
export function readLong(cursor: ByteCursor): number {
  let value = 0;
  let scale = 1;
  for (let i = 0; i < 10; i++) {
    const b = cursor.byte();
    value += (b & 0x7f) * scale;
    if ((b & 0x80) === 0) return value % 2 === 0 ? value / 2 : -(value + 1) / 2;
    scale *= 128;
  }
  throw new RunlogError('Corrupt', 'an Avro varint runs past 10 bytes');
}

/** A length (of bytes, a string, a block): a long that is not negative. */
export function readLength(cursor: ByteCursor): number {
  const length = readLong(cursor);
  if (length < 0 || !Number.isSafeInteger(length)) throw new RunlogError('Corrupt', `an Avro length of ${length}`);
  return length;
}

const FIXED_WIDTH: Readonly<Record<string, number>> = { null: 0, boolean: 1, float: 4, double: 8 };

function compile(schema: unknown, named: Map<string, Skip>, namespace: string): Skip {
  if (typeof schema === 'string') {
    if (schema in FIXED_WIDTH) return skipWidth(FIXED_WIDTH[schema]!);
    if (schema === 'int' || schema === 'long') return (cursor) => void readLong(cursor);
    if (schema === 'bytes' || schema === 'string') return (cursor) => cursor.skip(readLength(cursor));
    const found = named.get(schema.includes('.') ? schema : `${namespace}.${schema}`) ?? named.get(schema);
    if (found === undefined) throw new Error(`an Avro schema names an unknown type ${schema}`);
    return found;
  }
  if (Array.isArray(schema)) {
    const branches = schema.map((branch) => compile(branch, named, namespace));
    return (cursor) => {
      const branch = branches[readLong(cursor)];
      if (branch === undefined) throw new RunlogError('Corrupt', 'an Avro union branch out of range');
      branch(cursor);
    };
  }
  const s = schema as {
    type: unknown;
    name?: string;
    namespace?: string;
    fields?: { type: unknown }[];
    items?: unknown;
    values?: unknown;
    size?: number;
  };
  switch (s.type) {
    case 'record': {
      const space = s.namespace ?? (s.name!.includes('.') ? s.name!.slice(0, s.name!.lastIndexOf('.')) : namespace);
      const fields: Skip[] = [];
      const skip: Skip = (cursor) => {
        for (const field of fields) field(cursor);
      };
      named.set(s.name!.includes('.') ? s.name! : `${space}.${s.name}`, skip);
      for (const field of s.fields!) fields.push(compile(field.type, named, space));
      return skip;
    }
    case 'enum':
      return register(s, named, namespace, (cursor) => void readLong(cursor));
    case 'fixed':
      return register(s, named, namespace, skipWidth(s.size!));
    case 'array': {
      const item = compile(s.items, named, namespace);
      return (cursor) => skipBlocks(cursor, item);
    }
    case 'map': {
      const value = compile(s.values, named, namespace);
      return (cursor) =>
        skipBlocks(cursor, (c) => {
          c.skip(readLength(c));
          value(c);
        });
    }
    default:
      return compile(s.type, named, namespace); // a primitive with attributes (logicalType)
  }
}

function register(s: { name?: string; namespace?: string }, named: Map<string, Skip>, namespace: string, skip: Skip): Skip {
  named.set(s.name!.includes('.') ? s.name! : `${s.namespace ?? namespace}.${s.name}`, skip);
  return skip;
}

function skipWidth(width: number): Skip {
  return (cursor) => cursor.skip(width);
}

/**
 * Array or map blocks: a count (negative: its byte size follows), the items, until a count of 0.
 * A sized block's items are walked too, not skipped by its size: the count is what a decoder
 * believes, so it is what must be bounded by the bytes.
 */
function skipBlocks(cursor: ByteCursor, item: Skip): void {
  for (;;) {
    let count = readLong(cursor);
    if (count === 0) return;
    let end = -1;
    if (count < 0) {
      count = -count;
      const size = readLength(cursor);
      end = cursor.position + size;
    }
    for (let i = 0; i < count; i++) item(cursor);
    if (end >= 0 && cursor.position !== end)
      throw new RunlogError('Corrupt', `an Avro block's items end at byte ${cursor.position}, not at ${end} as its size says`);
  }
}

/** A cursor over bytes in memory, from `position` up to `limit` (Corrupt past it). */
export class BytesCursor implements ByteCursor {
  constructor(
    private readonly bytes: Uint8Array,
    public position: number,
    private readonly limit = bytes.length,
  ) {}

  byte(): number {
    if (this.position >= this.limit) throw truncated(1, this.position, this.limit);
    return this.bytes[this.position++]!;
  }

  skip(count: number): void {
    if (this.position + count > this.limit) throw truncated(count, this.position, this.limit);
    this.position += count;
  }
}

function truncated(count: number, at: number, limit: number): RunlogError {
  return new RunlogError('Corrupt', `truncated: ${count} bytes wanted at byte ${at} of ${limit}`);
}
