/**
 * Compiled readers of Avro record bodies, for the replay path.
 *
 * avsc decodes a body into an instance of its own record class, which the codec then
 * copies into the event's plain shape (and wraps each bytes field twice). For records
 * written with the newest schema of their type — every record, until a schema is
 * succeeded — this module reads the body straight into the event object instead: one
 * generated function per schema, one object literal per record. Records of older writer
 * schemas still go through avsc and schema resolution (codec.ts).
 *
 * Only the types runlog's schemas use are compiled: string, bytes, int, long (exact, as
 * exact-long.ts), boolean (any non-zero byte is true, as avsc reads it), enum, map and array of strings, and unions of null with one of those.
 * For any other schema `compileBodyReader` returns null and avsc is used. Bytes fields are
 * copied out of the input, as avsc's are. Malformed input throws `BodyError` (the codec turns it
 * into Corrupt) or reads past `end`, which the caller checks.
 */
import type { AvroRecordSchema } from './schemas.ts';
import { slabCopy } from './fold-slabs.ts';
import { StringCache } from './string-cache.ts';

/** A read position in a buffer; reused across records (no allocation per record). */
export interface Cursor {
  buf: Buffer;
  pos: number;
  /** The body ends here: a string, bytes or a block may not run past it. */
  end: number;
}

export type BodyReader = (c: Cursor) => Record<string, unknown>;

export class BodyError extends Error {
  /** True when the body ran out before a value ended (truncated or a bad length). */
  constructor(
    message: string,
    readonly truncated = false,
  ) {
    super(message);
  }
}

const TWO_POW_27 = 2 ** 27;
const TWO_POW_26 = 2 ** 26;

const INT_MIN = -(2 ** 31);
const INT_MAX = 2 ** 31 - 1;

/**
 * Avro int: a zigzag varint, read as avsc reads it, except that a value beyond 32 bits (a
 * damaged varint; avsc returns the number) is refused.
 */
function readInt(c: Cursor): number {
  const value = readLong(c);
  if (value < INT_MIN || value > INT_MAX) throw new BodyError(`int ${value} beyond the 32-bit range`);
  return value;
}

/** Avro long, exact for every safe integer, refusing the rest (as exact-long.ts). */
function readLong(c: Cursor): number {
  const buf = c.buf;
  let low = 0;
  let shift = 0;
  let byte = 0;
  do {
    byte = buf[c.pos++]!;
    low |= (byte & 0x7f) << shift;
    shift += 7;
  } while (byte & 0x80 && shift < 28);
  if (byte & 0x80) return readLongRest(c, low);
  return (low >>> 1) ^ -(low & 1);
}

/** A varint longer than 4 bytes: `low` holds its low 28 bits; the rest is read as an exact float. */
function readLongRest(c: Cursor, low: number): number {
  const buf = c.buf;
  let high = 0;
  let byte = 0x80;
  for (let scale = 1; byte & 0x80; scale *= 128) {
    if (c.pos > c.end) throw new BodyError('varint runs past the body', true);
    byte = buf[c.pos++]!;
    high += (byte & 0x7f) * scale;
  }
  const negative = low & 1;
  const magnitude = (negative ? (low + 1) / 2 : low >>> 1) + high * TWO_POW_27;
  if (high >= TWO_POW_26 || magnitude > Number.MAX_SAFE_INTEGER) throw new BodyError('long beyond Number.MAX_SAFE_INTEGER');
  return negative ? -magnitude : magnitude;
}

/** The byte length of a string or bytes value, checked to lie inside the body. */
function readLength(c: Cursor): number {
  const length = readLong(c);
  if (length < 0 || c.pos + length > c.end) throw new BodyError(`length ${length} runs past the body`, true);
  return length;
}

interface Utf8Slicing {
  utf8Slice(start: number, end: number): string;
}

function readString(c: Cursor): string {
  const length = readLength(c);
  const start = c.pos;
  c.pos += length;
  return (c.buf as unknown as Utf8Slicing).utf8Slice(start, start + length);
}

/**
 * Fields whose values repeat across records are read through a cache of recent strings
 * (string-cache.ts): names (a tenant, thread, agent or holder names many entries) in one,
 * entry ids (each in every event of its entry) in another, so that the ids of the entries in
 * flight do not push the names out. Other strings (run ids, messages) are read as they are.
 *
 * A cached string lives as long as its slot holds it: through the scavenges that come meanwhile,
 * copied at each and promoted at the second. Ids are new with every entry, so the ids' cache is
 * kept to 1,024 slots (the entries in flight of a busy log), a quarter of the names': with 4,096,
 * a replay copied ~200 KB of ids at every scavenge of its young generation (a 1M-event cold start:
 * scavenges 27 -> 19 ms of ~0.75 s, 2026-12-07).
 */
const NAMES = new StringCache(4096);
const ENTRY_IDS = new StringCache(1024);
const CACHED_FIELDS: ReadonlyMap<string, StringCache> = new Map([
  ['tenant', NAMES],
  ['thread', NAMES],
  ['agent', NAMES],
  ['holder', NAMES],
  ['entryId', ENTRY_IDS],
]);

function cachedStringReader(cache: StringCache): (c: Cursor) => string {
  return (c) => {
    const length = readLength(c);
    const start = c.pos;
    c.pos += length;
    return cache.text(c.buf, start, length);
  };
}

const CACHED_READERS: ReadonlyMap<string, (c: Cursor) => string> = new Map(
  [...CACHED_FIELDS].map(([field, cache]) => [field, cachedStringReader(cache)]),
);

const BYTES_READERS: Readonly<Record<BytesCopies, BytesReader>> = { own: readBytes, slab: readBytesInSlab };

/** How a compiled reader copies bytes fields out: each into its own array, or (a replay's) into shared slabs. */
export type BytesCopies = 'own' | 'slab';

type BytesReader = (c: Cursor) => Uint8Array;

/** How to read a field of `type` named `name`: through a string cache for the fields above. */
function fieldReader(name: string, type: unknown, bytes: BytesReader): ((c: Cursor) => unknown) | null {
  return (type === 'string' ? CACHED_READERS.get(name) : undefined) ?? valueReader(type, bytes);
}

/** Values this small are copied byte by byte: cheaper than making a view to copy from. */
const COPY_LOOP_BYTES = 64;

/**
 * A copy, never a view: the event must not change with (or keep alive) the input. V8 keeps
 * the bytes of a small new Uint8Array in its heap, so a copy costs no ArrayBuffer.
 */
function readBytes(c: Cursor): Uint8Array {
  return ownCopy(c, readLength(c));
}

/** The next `length` bytes (checked to lie in the body), copied into an array of their own. */
function ownCopy(c: Cursor, length: number): Uint8Array {
  const buf = c.buf;
  const start = c.pos;
  c.pos += length;
  const copy = new Uint8Array(length);
  if (length > COPY_LOOP_BYTES) copy.set(buf.subarray(start, start + length));
  else for (let i = 0; i < length; i++) copy[i] = buf[start + i]!;
  return copy;
}

/** readBytes for a replay (fold-slabs.ts): what V8 would not keep on its heap is copied into a shared slab instead. */
function readBytesInSlab(c: Cursor): Uint8Array {
  const length = readLength(c);
  if (length <= COPY_LOOP_BYTES) return ownCopy(c, length);
  const start = c.pos;
  c.pos += length;
  return slabCopy(c.buf, start, length);
}

/** The item count of the next block of a map or array (a negative count is followed by the block's byte size). */
function readBlockCount(c: Cursor): number {
  if (c.pos >= c.end) throw new BodyError('block runs past the body', true);
  const count = readLong(c);
  if (count >= 0) return count;
  readLong(c);
  return -count;
}

function readStringMap(c: Cursor): Record<string, string> {
  const map: Record<string, string> = {};
  for (let n = readBlockCount(c); n > 0; n = readBlockCount(c)) {
    for (; n > 0; n--) {
      const key = readString(c);
      map[key] = readString(c); // as avsc: the codec refuses to write a "__proto__" key
    }
  }
  return map;
}

function readStringArray(c: Cursor): string[] {
  const items: string[] = [];
  for (let n = readBlockCount(c); n > 0; n = readBlockCount(c)) for (; n > 0; n--) items.push(readString(c));
  return items;
}

function readBoolean(c: Cursor): boolean {
  if (c.pos >= c.end) throw new BodyError('boolean runs past the body', true);
  return c.buf[c.pos++] !== 0;
}

/** The primitives but bytes (fieldReader's `bytes` says how those are copied). */
const PRIMITIVES: Readonly<Record<string, (c: Cursor) => unknown>> = {
  string: readString,
  boolean: readBoolean,
  int: readInt,
  long: readLong,
};

/** How to read one value of `type`, or null if this module does not compile it. */
function valueReader(type: unknown, bytes: BytesReader): ((c: Cursor) => unknown) | null {
  if (type === 'bytes') return bytes;
  if (typeof type === 'string') return PRIMITIVES[type] ?? null;
  if (Array.isArray(type)) return unionReader(type, bytes);
  if (typeof type !== 'object' || type === null) return null;
  const t = type as { type?: unknown; name?: unknown; namespace?: unknown; symbols?: unknown; values?: unknown; items?: unknown };
  if (t.type === 'bytes') return bytes;
  if (t.type === 'long' || t.type === 'int' || t.type === 'string' || t.type === 'boolean') return PRIMITIVES[t.type]!;
  if (t.type === 'map') return t.values === 'string' ? readStringMap : null;
  if (t.type === 'array') return t.items === 'string' ? readStringArray : null;
  if (t.type === 'enum' && Array.isArray(t.symbols)) return enumReader(String(t.name), t.symbols as string[]);
  return null;
}

function enumReader(name: string, symbols: readonly string[]): (c: Cursor) => string {
  return (c) => {
    const index = readInt(c);
    const symbol = symbols[index];
    if (symbol === undefined) throw new BodyError(`invalid ${name} enum index: ${index}`);
    return symbol;
  };
}

/** Unions of null and one other compiled type, in either order. */
function unionReader(branches: readonly unknown[], bytes: BytesReader): ((c: Cursor) => unknown) | null {
  if (branches.length !== 2) return null;
  const nullAt = branches.indexOf('null');
  if (nullAt < 0) return null;
  const other = valueReader(branches[1 - nullAt], bytes);
  if (other === null) return null;
  return (c) => {
    const index = readInt(c);
    if (index === nullAt) return null;
    if (index === 1 - nullAt) return other(c);
    throw new BodyError(`invalid union index: ${index}`);
  };
}

/**
 * A reader of bodies of `schema` into `{ type: eventType, ...fields }` (fields in schema
 * order), or null if a field's type is not compiled here. Generated as one object literal,
 * which V8 builds far faster than property-by-property assignment. Field names are Avro
 * names ([A-Za-z_][A-Za-z0-9_]*), checked again before use. `bytes` 'slab': bytes fields of more
 * than 64 bytes are views of fold-slabs.ts's slabs (a replay's decoder: see there), not copies of their own.
 */
export function compileBodyReader(eventType: string, schema: AvroRecordSchema, bytes: BytesCopies = 'own'): BodyReader | null {
  const readers: Array<(c: Cursor) => unknown> = [];
  const parts: string[] = [];
  for (const field of schema.fields) {
    const read = fieldReader(field.name, field.type, BYTES_READERS[bytes]);
    if (read === null || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(field.name) || field.name === 'type') return null;
    parts.push(`${field.name}: r[${readers.length}](c)`);
    readers.push(read);
  }
  const body = `return { type: ${JSON.stringify(eventType)}, ${parts.join(', ')} };`;
  return new Function('r', 'c', body).bind(undefined, readers) as BodyReader;
}

/** Reads past a string (or bytes) value, checked to lie inside the body: nothing made of it. */
function skipString(c: Cursor): void {
  const length = readLength(c); // first: it moves c.pos past the length itself
  c.pos += length;
}

/**
 * A reader for a fold that keeps nothing of the event it is handed (src/projector/replay.ts):
 * every body of `schema` is read into ONE object, made once and returned by every call (valid
 * until the next), and the string fields named in `unread` are read past, their bytes checked
 * to lie in the body as any string's, but never made into strings (they stay ''). Otherwise
 * as compileBodyReader: the same readers, the same checks, the same errors. Null where
 * compileBodyReader is null, or a field of `unread` is not a string.
 */
export function compileFoldReader(
  eventType: string,
  schema: AvroRecordSchema,
  unread: ReadonlySet<string>,
  bytes: BytesCopies = 'own',
): BodyReader | null {
  const readers: Array<(c: Cursor) => unknown> = [];
  const parts: string[] = [];
  const into: Record<string, unknown> = { type: eventType };
  for (const field of schema.fields) {
    const read = fieldReader(field.name, field.type, BYTES_READERS[bytes]);
    if (read === null || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(field.name) || field.name === 'type') return null;
    if (unread.has(field.name)) {
      if (field.type !== 'string') return null;
      into[field.name] = '';
      parts.push('s(c);');
      continue;
    }
    into[field.name] = null;
    parts.push(`o.${field.name} = r[${readers.length}](c);`);
    readers.push(read);
  }
  const body = `${parts.join(' ')} return o;`;
  return new Function('r', 'o', 's', 'c', body).bind(undefined, readers, into, skipString) as BodyReader;
}
