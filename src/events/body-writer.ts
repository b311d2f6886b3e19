/**
 * Compiled writers of Avro record bodies, for the command path (every command encodes its
 * events before they are appended).
 *
 * avsc writes a body from a copy of the event (bytes fields wrapped as Buffers), after the
 * codec has checked the event's text (well-formed.ts). For the values runlog's commands
 * actually write, this module writes the body straight from the event instead: one
 * generated function per schema, calling one small writer per field.
 *
 * A compiled writer only ever writes a value it is sure of. It DECLINES (returns -1) on
 * anything else: a field of the wrong type or missing (avsc would fill a default in or
 * refuse), a number that is not an exact int or long, a string that is not well-formed
 * UTF-16, a map key "__proto__", a map that is not a plain object, or too little room left
 * in `buf`. The codec then encodes the event the slow way, which writes or refuses it
 * exactly as before: the bytes of every value written here are the bytes avsc writes
 * (property-tested in test/events/codec.test.ts), and every refusal keeps its message.
 *
 * Only the types runlog's schemas use are compiled: string, bytes, int, long, boolean, enum,
 * map of strings, records (nested, and named ones referred to by name), arrays of any of
 * these, and unions of null with one of them. The events use the flat ones; a partition
 * snapshot (snapshot-codec.ts) all of them.
 *
 * `wroteShort()` says whether the last decline was for room alone (the value itself was
 * fine so far): a caller writing into a buffer of its own (a snapshot) then grows it.
 */
import { isWellFormed } from '../validation/index.ts';
import type { AvroRecordSchema } from './schemas.ts';

/**
 * A value that writes its own encoding: the bytes the compiled writer of its field's type
 * writes, declining (-1) as it would. Accepted where an array is written: a snapshot's open
 * entries are written straight from the view's entries (projections/open-snapshot.ts) rather
 * than from an array of objects built for them first.
 */
export interface SelfWriting {
  writeAvro(buf: Buffer, pos: number): number;
}

function isSelfWriting(value: unknown): value is SelfWriting {
  return typeof value === 'object' && value !== null && typeof (value as Partial<SelfWriting>).writeAvro === 'function';
}

/** Writes `event`'s body into `buf` from `pos`; the end position, or -1 if declined. */
export type BodyWriter = (event: Record<string, unknown>, buf: Buffer, pos: number) => number;

/** One value's writer: the end position, or -1 if declined. */
type ValueWriter = (value: unknown, buf: Buffer, pos: number) => number;

/** Whether a writer declined for lack of room since the last resetShort() (see the top). */
let short = false;

/** Declines for lack of room. */
export function noRoom(): number {
  short = true;
  return -1;
}

export function resetShort(): void {
  short = false;
}

export function wroteShort(): boolean {
  return short;
}

/** The most bytes a varint of a long takes. */
export const MAX_VARINT_BYTES = 10;
const INT_LIMIT = 2 ** 30;

/** The zigzag varint of a safe integer (as avsc's Tap.writeLong and exact-long.ts write it); the end position. */
export function writeVarint(n: number, buf: Buffer, pos: number): number {
  if (n >= -INT_LIMIT && n < INT_LIMIT) {
    let z = n >= 0 ? n << 1 : (~n << 1) | 1;
    while (z > 0x7f) {
      buf[pos++] = (z & 0x7f) | 0x80;
      z >>>= 7;
    }
    buf[pos++] = z;
    return pos;
  }
  // Beyond 30 bits: as exact-long.ts, on the magnitude, so that no double is rounded (twice a safe
  // integer is even and below 2^54, so exact; the sign is the low bit). Its low 28 bits are four
  // full groups of 7 (the zigzag value is at least 2^31), the rest (below 2^26) an int's varint.
  const rest = n >= 0 ? n * 2 : (-n - 1) * 2;
  const low = (rest % LOW_GROUPS) | (n < 0 ? 1 : 0);
  let high = (rest - (rest % LOW_GROUPS)) / LOW_GROUPS;
  buf[pos++] = (low & 0x7f) | 0x80;
  buf[pos++] = ((low >>> 7) & 0x7f) | 0x80;
  buf[pos++] = ((low >>> 14) & 0x7f) | 0x80;
  buf[pos++] = ((low >>> 21) & 0x7f) | 0x80;
  while (high > 0x7f) {
    buf[pos++] = (high & 0x7f) | 0x80;
    high >>>= 7;
  }
  buf[pos++] = high;
  return pos;
}

/** 2^28: the low four 7-bit groups of a varint. */
const LOW_GROUPS = 2 ** 28;

export function writeLong(value: unknown, buf: Buffer, pos: number): number {
  if (!Number.isSafeInteger(value)) return -1;
  if (pos + MAX_VARINT_BYTES > buf.length) return noRoom();
  return writeVarint(value as number, buf, pos);
}

export function writeInt(value: unknown, buf: Buffer, pos: number): number {
  if (value !== ((value as number) | 0)) return -1;
  if (pos + MAX_VARINT_BYTES > buf.length) return noRoom();
  return writeVarint(value as number, buf, pos);
}

function writeBoolean(value: unknown, buf: Buffer, pos: number): number {
  if (typeof value !== 'boolean') return -1;
  if (pos >= buf.length) return noRoom();
  buf[pos] = value ? 1 : 0;
  return pos + 1;
}

/** Strings this short are written byte by byte when they are ASCII: cheaper than a call into C++. */
const SHORT_STRING = 64;

interface Utf8Writing {
  utf8Write(text: string, offset: number, length: number): number;
}

export function writeString(value: unknown, buf: Buffer, pos: number): number {
  if (typeof value !== 'string') return -1;
  const length = value.length;
  // Room for the worst case: 3 bytes per UTF-16 unit, and the length's varint.
  if (pos + MAX_VARINT_BYTES + 3 * length > buf.length) return noRoom();
  if (length < SHORT_STRING) {
    let ascii = true;
    for (let i = 0; i < length; i++) {
      const c = value.charCodeAt(i);
      if (c > 0x7f) {
        ascii = false;
        break;
      }
      buf[pos + 1 + i] = c;
    }
    if (ascii) {
      buf[pos] = length << 1; // length < 64: a one-byte varint
      return pos + 1 + length;
    }
  }
  // A lone surrogate would not read back as written: the codec refuses it (the slow way says so).
  if (!isWellFormed(value)) return -1;
  const bytes = Buffer.byteLength(value, 'utf8');
  pos = writeVarint(bytes, buf, pos);
  return pos + (buf as unknown as Utf8Writing).utf8Write(value, pos, bytes);
}

export function writeBytes(value: unknown, buf: Buffer, pos: number): number {
  if (!(value instanceof Uint8Array)) return -1;
  const length = value.length;
  if (pos + MAX_VARINT_BYTES + length > buf.length) return noRoom();
  pos = writeVarint(length, buf, pos);
  buf.set(value, pos);
  return pos + length;
}

/** A map of strings, as avsc writes it: one block of every key (Object.keys order), then 0. */
export function writeStringMap(value: unknown, buf: Buffer, pos: number): number {
  if (typeof value !== 'object' || value === null || Object.getPrototypeOf(value) !== Object.prototype) return -1;
  if (isEmptyObject(value)) {
    if (pos >= buf.length) return noRoom();
    buf[pos] = 0; // no block: most maps (metadata) are empty, and Object.keys would make an array for each
    return pos + 1;
  }
  const keys = Object.keys(value);
  if (keys.length > 0) {
    if (pos + MAX_VARINT_BYTES > buf.length) return noRoom();
    pos = writeVarint(keys.length, buf, pos);
    for (const key of keys) {
      if (key === '__proto__') return -1;
      pos = writeString(key, buf, pos);
      if (pos < 0) return -1;
      pos = writeString((value as Record<string, unknown>)[key], buf, pos);
      if (pos < 0) return -1;
    }
  }
  if (pos >= buf.length) return noRoom();
  buf[pos] = 0;
  return pos + 1;
}

/** Whether a plain object has no enumerable key (for-in, which makes no array; an inherited key counts: Object.keys then decides). */
function isEmptyObject(value: object): boolean {
  for (const _ in value) return false;
  return true;
}

/** An array, as avsc writes it: one block of every item, then 0. */
function arrayWriter(item: ValueWriter): ValueWriter {
  return (value, buf, pos) => {
    if (!Array.isArray(value)) return isSelfWriting(value) ? value.writeAvro(buf, pos) : -1;
    const length = value.length;
    if (length > 0) {
      if (pos + MAX_VARINT_BYTES > buf.length) return noRoom();
      pos = writeVarint(length, buf, pos);
      for (let i = 0; i < length; i++) {
        pos = item(value[i], buf, pos);
        if (pos < 0) return -1;
      }
    }
    if (pos >= buf.length) return noRoom();
    buf[pos] = 0;
    return pos + 1;
  };
}

const writeStringArray = arrayWriter(writeString);

const PRIMITIVES: Readonly<Record<string, ValueWriter>> = {
  string: writeString,
  boolean: writeBoolean,
  bytes: writeBytes,
  int: writeInt,
  long: writeLong,
};

/** The named types (records) compiled so far, by full name, for later references to them by name. */
type Named = Map<string, ValueWriter>;

/** How to write one value of `type` (named types resolved in `namespace`), or null if this module does not compile it. */
function valueWriter(type: unknown, named: Named, namespace: string): ValueWriter | null {
  if (typeof type === 'string') return PRIMITIVES[type] ?? named.get(fullName(type, namespace)) ?? null;
  if (Array.isArray(type)) return unionWriter(type, named, namespace);
  if (typeof type !== 'object' || type === null) return null;
  const t = type as { type?: unknown; symbols?: unknown; values?: unknown; items?: unknown };
  if (t.type === 'long' || t.type === 'int' || t.type === 'string' || t.type === 'bytes' || t.type === 'boolean')
    return PRIMITIVES[t.type]!;
  if (t.type === 'map') return t.values === 'string' ? writeStringMap : null;
  if (t.type === 'array') {
    if (t.items === 'string') return writeStringArray;
    const item = valueWriter(t.items, named, namespace);
    return item === null ? null : arrayWriter(item);
  }
  if (t.type === 'enum' && Array.isArray(t.symbols)) return enumWriter(t.symbols as string[]);
  if (t.type === 'record') return recordWriter(type as AvroRecordSchema, named, namespace);
  return null;
}

/** A name's full name: as it is if dotted, else in `namespace`. */
function fullName(name: string, namespace: string): string {
  return name.includes('.') || namespace === '' ? name : `${namespace}.${name}`;
}

function enumWriter(symbols: readonly string[]): ValueWriter {
  return (value, buf, pos) => {
    const index = typeof value === 'string' ? symbols.indexOf(value) : -1;
    if (index < 0) return -1;
    if (pos + MAX_VARINT_BYTES > buf.length) return noRoom();
    return writeVarint(index, buf, pos);
  };
}

/** Unions of null and one other compiled type, in either order: null, or a value of the other branch. */
function unionWriter(branches: readonly unknown[], named: Named, namespace: string): ValueWriter | null {
  if (branches.length !== 2) return null;
  const nullAt = branches.indexOf('null');
  if (nullAt < 0) return null;
  const other = valueWriter(branches[1 - nullAt], named, namespace);
  if (other === null) return null;
  return (value, buf, pos) => {
    // (undefined, for which avsc writes the field's default, is declined by every branch writer.)
    if (pos + MAX_VARINT_BYTES > buf.length) return noRoom();
    if (value === null) return writeVarint(nullAt, buf, pos);
    return other(value, buf, writeVarint(1 - nullAt, buf, pos));
  };
}

/**
 * A writer of bodies of `schema` from events of its shape (fields in schema order), or null
 * if a field's type is not compiled here. Generated as one function per schema, the field
 * names checked as Avro names ([A-Za-z_][A-Za-z0-9_]*) before use.
 */
export function compileBodyWriter(schema: AvroRecordSchema): BodyWriter | null {
  return fieldsWriter(schema, new Map(), schema.namespace ?? '', false) as BodyWriter | null;
}

/**
 * A nested record's writer (declining a value that is not an object), registered under its
 * full name before its fields are compiled, so that they may refer to it.
 */
function recordWriter(schema: AvroRecordSchema, named: Named, enclosing: string): ValueWriter | null {
  if (typeof schema.name !== 'string' || !Array.isArray(schema.fields)) return null;
  const namespace = schema.name.includes('.')
    ? schema.name.slice(0, schema.name.lastIndexOf('.'))
    : typeof schema.namespace === 'string'
      ? schema.namespace
      : enclosing;
  const name = fullName(schema.name, namespace);
  let compiled: ValueWriter | null = null;
  named.set(name, (value, buf, pos) => compiled!(value, buf, pos));
  compiled = fieldsWriter(schema, named, namespace, true);
  if (compiled === null) named.delete(name);
  return compiled;
}

/**
 * One generated function writing `schema`'s fields in order (field names checked as Avro
 * names, [A-Za-z_][A-Za-z0-9_]*, before use), or null if a field's type is not compiled
 * here. `checked`: it first declines a value that is not an object (the codec checks an
 * event itself).
 */
function fieldsWriter(schema: AvroRecordSchema, named: Named, namespace: string, checked: boolean): ValueWriter | null {
  const writers: ValueWriter[] = [];
  const steps: string[] = [];
  for (const field of schema.fields) {
    const write = valueWriter(field.type, named, namespace);
    if (write === null || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(field.name)) return null;
    steps.push(`p = w[${writers.length}](e.${field.name}, b, p); if (p < 0) return -1;`);
    writers.push(write);
  }
  const check = checked ? `if (typeof e !== 'object' || e === null) return -1; ` : '';
  const body = `${check}let p = pos; ${steps.join(' ')} return p;`;
  return new Function('w', 'e', 'b', 'pos', body).bind(undefined, writers) as ValueWriter;
}
