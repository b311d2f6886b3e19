/**
 * The Avro codec of runlog events. avsc is imported only here and in avro-types.ts (the
 * types it builds); event-values.ts turns events into what avsc reads and writes, and back.
 *
 * Wire format: Avro single-object encoding, so every record names its writer schema:
 *   0xC3 0x01 | CRC-64-AVRO fingerprint of the writer schema's PCF, 8 bytes little-endian | Avro binary body
 * Encoding always uses the newest version of the event's schema. Decoding finds the writer
 * schema by fingerprint among every version in schemas/ and resolves it (Avro schema
 * resolution) to the newest version of that event type, so old records stay readable.
 */
import type avsc from 'avsc';
import { describe, isPlainObject, isUint8Array } from '../validation/index.ts';
import { RunlogError, invalidArgument } from '../errors.ts';
import type { EventType, RunlogEvent } from './types.ts';
import { loadSchemaDir, type AvroRecordSchema, type SchemaVersion } from './schemas.ts';
import { fingerprintBytesLE } from './rabin.ts';
import { avroType, describeInvalid } from './avro-types.ts';
import { compileToEvent, fieldPlans, toAvroValue, type ToEvent } from './event-values.ts';
import { isOf, textFields, type TextField } from './well-formed.ts';
import { BodyError, compileBodyReader, compileFoldReader, type BodyReader, type Cursor } from './body-reader.ts';
import { compileBodyWriter, type BodyWriter } from './body-writer.ts';
import { FingerprintTable } from './fingerprint-table.ts';
import { copyToSlab } from './slab.ts';

export const SINGLE_OBJECT_MARKER: readonly [number, number] = [0xc3, 0x01];
const HEADER_LENGTH = 10;
const SCRATCH_LENGTH = 64 * 1024;

/** A codec of one family of records (events; commands: command-codec.ts), each a plain object with its record name as `type`. */
export interface Codec<V extends { type: string }> {
  encode(value: V): Uint8Array;
  decode(bytes: Uint8Array): V;
  /** `decode` of bytes [start, end) of `buf`, where they lie (no view made): for a caller's own read buffer. */
  decodeAt(buf: Buffer, start: number, end: number): V;
  /**
   * A `decodeAt` for a fold that keeps no reference to the event it is handed: records of the
   * types named in `unread`, of their newest schema, are read into one object per type, reused by
   * every call, with the string fields `unread` names read past and left ''. Any other record
   * decodes as `decodeAt` decodes it. Records of the newest schemas have their bytes fields of
   * more than 64 bytes copied into shared slabs (fold-slabs.ts: what the fold keeps of them it
   * moves out at the end). Refuses what `decodeAt` refuses.
   */
  foldDecoder(unread: UnreadFields<V['type']>): (buf: Buffer, start: number, end: number) => V;
  /** The newest schema of a type (the one `encode` writes). */
  schemaFor(type: V['type']): AvroRecordSchema;
  /** CRC-64-AVRO fingerprint (unsigned) of the newest schema of a type. */
  fingerprintOf(type: V['type']): bigint;
}

export type EventCodec = Codec<RunlogEvent>;

/** Per event type, the string fields a fold never reads (see Codec.foldDecoder). */
export type UnreadFields<T extends string> = Readonly<Partial<Record<T, readonly string[]>>>;

/** What encoding an event type needs: its newest schema and its 10-byte header. */
interface Writer {
  readonly version: SchemaVersion<string>;
  readonly type: avsc.Type;
  readonly header: Buffer;
  readonly bytesFields: readonly string[];
  readonly textFields: readonly TextField[];
  /** Writes the body straight from the event (body-writer.ts); null: always avsc. */
  readonly body: BodyWriter | null;
}

/** How to read records of one writer schema into the newest shape of its event type. */
interface Reader {
  readonly file: string;
  /** The writer schema. */
  readonly version: SchemaVersion<string>;
  readonly fingerprintHigh: number;
  readonly type: avsc.Type;
  /** Absent when the writer schema is the reader schema. */
  readonly resolver: avsc.Resolver | undefined;
  readonly toEvent: ToEvent<Record<string, unknown>>;
  /** Reads the body straight into the event; null: decode with avsc (and resolve). */
  readonly body: BodyReader | null;
}

export interface CodecOptions {
  /**
   * Read records of the newest schemas with compiled body readers (body-reader.ts) and write
   * them with compiled body writers (body-writer.ts). Default true; false: avsc only (for tests).
   */
  bodyReaders?: boolean;
  /** What a record is called in errors, and the decode function's name: default 'event', 'decodeEvent'. */
  noun?: string;
  decoderName?: string;
}

/** A codec over the given schema versions (all versions of every event type it must read). */
export function createCodec(schemas: readonly SchemaVersion[], options?: CodecOptions): EventCodec;
export function createCodec<V extends { type: string }>(schemas: readonly SchemaVersion<V['type']>[], options?: CodecOptions): Codec<V>;
export function createCodec(schemas: readonly SchemaVersion<string>[], options: CodecOptions = {}): Codec<{ type: string }> {
  const names = { noun: options.noun ?? 'event', decoderName: options.decoderName ?? 'decodeEvent' };
  return new AvroCodec(schemas, options.bodyReaders ?? true, names);
}

class AvroCodec<V extends { type: string }> implements Codec<V> {
  readonly #writers = new Map<string, Writer>();
  /** Readers keyed by the low 32 bits of the fingerprint (read without BigInt per record), as they are added. */
  readonly #readers = new Map<number, Reader[]>();
  /** The same, for the lookup per record. */
  readonly #table: FingerprintTable<Reader>;
  readonly #scratch = Buffer.allocUnsafe(SCRATCH_LENGTH);
  /**
   * avsc and the body readers read Buffers. A Uint8Array is read through a Buffer over its
   * whole ArrayBuffer, kept for the next call: log readers hand over many records of one
   * chunk, and a Buffer view costs more than the decoding of a small record. Reads that run
   * past the record's end are caught by the offset checks in decode.
   */
  #wrapped: Buffer = Buffer.alloc(0);
  readonly #cursor: Cursor = { buf: this.#wrapped, pos: 0, end: 0 };

  readonly #names: { noun: string; decoderName: string };

  constructor(schemas: readonly SchemaVersion<string>[], bodyReaders: boolean, names: { noun: string; decoderName: string }) {
    this.#names = names;
    for (const version of newestPerType(schemas)) this.#writers.set(version.eventType, createWriter(version, bodyReaders));
    for (const version of schemas) this.#addReader(version, bodyReaders);
    this.#table = tableOf(this.#readers, (reader) => reader);
  }

  encode(event: V): Uint8Array {
    const noun = this.#names.noun;
    if (!isPlainObject(event)) throw invalidArgument(`an ${noun} must be a plain object, got ${describe(event)}`);
    const writer = this.#writers.get(readField(event, 'type') as string);
    if (!writer) throw invalidArgument(`cannot encode ${noun} of unknown type ${describe(readField(event, 'type'))}`);
    if (writer.body !== null) {
      const written = this.#writeBody(writer, writer.body, event);
      if (written >= 0) return this.#copyOut(written);
    }
    const value = readingFields(() => toAvroValue(event, writer), noun);
    const end = this.#encodeInto(writer, value, this.#scratch);
    if (end < 0) {
      // Larger than the scratch buffer: encode again into a buffer of its own, returned as is.
      const own = Buffer.allocUnsafe(this.#scratch.length - end);
      return new Uint8Array(own.buffer, own.byteOffset, this.#encodeInto(writer, value, own));
    }
    return this.#copyOut(end);
  }

  /**
   * The fast way: header and body written straight from the event into the scratch buffer.
   * The end offset, or -1 when the compiled writer declines the event (or a getter of it
   * throws): the slow way then writes it, or refuses it with the reason.
   */
  #writeBody(writer: Writer, body: BodyWriter, event: V): number {
    const scratch = this.#scratch;
    writer.header.copy(scratch, 0);
    try {
      return body(event as unknown as Record<string, unknown>, scratch, HEADER_LENGTH);
    } catch {
      return -1;
    }
  }

  /** The encoded bytes [0, end) of the scratch buffer, copied out (slab.ts). */
  #copyOut(end: number): Uint8Array {
    return copyToSlab(this.#scratch, end);
  }

  decode(bytes: Uint8Array): V {
    // The brand check comes first: a Proxy of a Uint8Array passes `instanceof` but throws on `.buffer`.
    if (!isUint8Array(bytes)) throw invalidArgument(`${this.#names.decoderName} needs a Uint8Array, got ${describe(bytes)}`);
    let buf = this.#wrapped;
    let start = bytes.byteOffset;
    // The common case: a view of the buffer the last record came from (a replay's chunk).
    if (!(buf.buffer === bytes.buffer && buf.length === bytes.buffer.byteLength)) {
      if (Buffer.isBuffer(bytes)) {
        buf = bytes;
        start = 0;
      } else buf = this.#wrapped = Buffer.from(bytes.buffer);
    }
    const reader = this.#readerAt(bytes, 0, bytes.length);
    const end = start + bytes.length;
    if (reader.body !== null) return this.#readBody(reader, reader.body, buf, start + HEADER_LENGTH, end);
    return this.#decodeResolved(reader, buf, start, end);
  }

  /**
   * `decode` of bytes [start, end) of `buf` (a Buffer the caller holds: the file log's replay
   * decodes each record where it lies, no view made per record).
   */
  decodeAt(buf: Buffer, start: number, end: number): V {
    const reader = this.#readerAt(buf, start, end - start);
    if (reader.body !== null) return this.#readBody(reader, reader.body, buf, start + HEADER_LENGTH, end);
    return this.#decodeResolved(reader, buf, start, end);
  }

  /** Through avsc: a record of an older writer schema, resolved to the newest. */
  #decodeResolved(reader: Reader, buf: Buffer, start: number, end: number): V {
    let decoded: { value: Record<string, unknown>; offset: number };
    try {
      decoded = reader.type.decode(buf, start + HEADER_LENGTH, reader.resolver);
    } catch (error) {
      throw corrupt(`invalid ${reader.file} body: ${(error as Error).message}`, error);
    }
    if (decoded.offset < 0 || decoded.offset > end) {
      throw corrupt(`truncated or malformed ${reader.file} body (${end - start} bytes in all)`);
    }
    if (decoded.offset < end) throw corrupt(`${end - decoded.offset} trailing bytes after the ${reader.file} body`);
    return reader.toEvent(decoded.value) as V;
  }

  #readBody(reader: Reader, body: BodyReader, buf: Buffer, start: number, end: number): V {
    const cursor = this.#cursor;
    cursor.buf = buf;
    cursor.pos = start;
    cursor.end = end;
    let event: Record<string, unknown>;
    try {
      event = body(cursor);
    } catch (error) {
      if (!(error instanceof BodyError)) throw error;
      if (error.truncated)
        throw corrupt(`truncated or malformed ${reader.file} body (${end - start + HEADER_LENGTH} bytes in all): ${error.message}`);
      throw corrupt(`invalid ${reader.file} body: ${error.message}`, error);
    }
    if (cursor.pos > end) throw corrupt(`truncated or malformed ${reader.file} body (${end - start + HEADER_LENGTH} bytes in all)`);
    if (cursor.pos < end) throw corrupt(`${end - cursor.pos} trailing bytes after the ${reader.file} body`);
    return event as unknown as V;
  }

  foldDecoder(unread: UnreadFields<V['type']>): (buf: Buffer, start: number, end: number) => V {
    const table = tableOf(this.#readers, (reader) => {
      const fields = (unread as Record<string, readonly string[] | undefined>)[reader.version.eventType];
      // Only a compiled body reader (a record of the newest schema) has a fold reader; the rest decode whole.
      if (reader.body === null) return reader;
      const { eventType, schema } = reader.version;
      const fold =
        fields === undefined ? compileBodyReader(eventType, schema, 'slab') : compileFoldReader(eventType, schema, new Set(fields), 'slab');
      return fold === null ? reader : { ...reader, body: fold };
    });
    return (buf, start, end) => {
      const reader = this.#readerAt(buf, start, end - start, table);
      if (reader.body !== null) return this.#readBody(reader, reader.body, buf, start + HEADER_LENGTH, end);
      return this.#decodeResolved(reader, buf, start, end);
    };
  }

  schemaFor(eventType: V['type']): AvroRecordSchema {
    return this.#writer(eventType).version.schema;
  }

  fingerprintOf(eventType: V['type']): bigint {
    return this.#writer(eventType).version.fingerprint;
  }

  /** Header and body into `buf`; the end offset, or minus the bytes missing if `buf` is short. */
  #encodeInto(writer: Writer, value: unknown, buf: Buffer): number {
    writer.header.copy(buf, 0);
    try {
      return writer.type.encode(value, buf, HEADER_LENGTH);
    } catch (error) {
      if (error instanceof RunlogError) throw error;
      throw invalidArgument(
        `cannot encode ${writer.version.eventType}: ${readingFields(() => describeInvalid(writer.type, value, error), this.#names.noun)}`,
      );
    }
  }

  /** The reader of the record of `length` bytes at `at` of `bytes`, by its single-object header. */
  #readerAt(bytes: Uint8Array, at: number, length: number, readers = this.#table): Reader {
    if (length < HEADER_LENGTH) {
      throw corrupt(`${this.#names.noun} record of ${length} bytes is shorter than the ${HEADER_LENGTH}-byte single-object header`);
    }
    if (bytes[at] !== SINGLE_OBJECT_MARKER[0] || bytes[at + 1] !== SINGLE_OBJECT_MARKER[1]) {
      throw corrupt(`bad single-object marker 0x${hex(bytes[at]!)} 0x${hex(bytes[at + 1]!)}, expected 0xc3 0x01`);
    }
    const low = readUint32LE(bytes, at + 2);
    const high = readUint32LE(bytes, at + 6);
    const reader = readers.get(low, high);
    if (reader !== undefined) return reader;
    const fingerprint = (BigInt(high) << 32n) | BigInt(low);
    throw corrupt(`unknown writer schema fingerprint 0x${fingerprint.toString(16).padStart(16, '0')}`);
  }

  #addReader(version: SchemaVersion<string>, bodyReaders: boolean): void {
    const newest = this.#writer(version.eventType);
    const low = Number(version.fingerprint & 0xffff_ffffn);
    const list = this.#readers.get(low) ?? [];
    const high = Number(version.fingerprint >> 32n);
    if (list.some((r) => r.fingerprintHigh === high)) throw new Error(`schema ${version.file} has the fingerprint of another schema`);
    const resolver = version === newest.version ? undefined : newest.type.createResolver(avroType(version.schema));
    const toEvent = compileToEvent<Record<string, unknown>>(version.eventType, fieldPlans(newest.version.schema));
    const body = bodyReaders && resolver === undefined ? compileBodyReader(version.eventType, version.schema) : null;
    list.push({ file: version.file, version, fingerprintHigh: high, type: newest.type, resolver, toEvent, body });
    this.#readers.set(low, list);
  }

  #writer(eventType: string): Writer {
    const writer = this.#writers.get(eventType);
    if (!writer) throw invalidArgument(`no schema for ${this.#names.noun} type ${describe(eventType)}`);
    return writer;
  }
}

/** The readers of `byLow` (keyed by their fingerprint's low half), each as `as` makes it, in a table for the lookup per record. */
function tableOf(byLow: ReadonlyMap<number, readonly Reader[]>, as: (reader: Reader) => Reader): FingerprintTable<Reader> {
  return new FingerprintTable(
    [...byLow].flatMap(([low, readers]) => readers.map((reader) => [low, reader.fingerprintHigh, as(reader)] as const)),
  );
}

function newestPerType(schemas: readonly SchemaVersion<string>[]): SchemaVersion<string>[] {
  const newest = new Map<string, SchemaVersion<string>>();
  for (const s of schemas) if ((newest.get(s.eventType)?.version ?? -1) < s.version) newest.set(s.eventType, s);
  return [...newest.values()];
}

function createWriter(version: SchemaVersion<string>, bodyWriters: boolean): Writer {
  const header = Buffer.alloc(HEADER_LENGTH);
  header.set(SINGLE_OBJECT_MARKER, 0);
  header.set(fingerprintBytesLE(version.fingerprint), 2);
  const fields = version.schema.fields;
  const bytesFields = fields.filter((f) => isOf(f.type, 'bytes')).map((f) => f.name);
  const body = bodyWriters ? compileBodyWriter(version.schema) : null;
  return { version, type: avroType(version.schema), header, bytesFields, textFields: textFields(fields), body };
}

/** A field of a caller's event; a throwing getter is InvalidArgument. */
function readField(event: object, name: string): unknown {
  return readingFields(() => (event as Record<string, unknown>)[name]);
}

/** Runs `read` over a caller's event: a getter (or proxy trap) that throws is InvalidArgument, not a raw error. */
function readingFields<T>(read: () => T, noun = 'event'): T {
  try {
    return read();
  } catch (error) {
    if (error instanceof RunlogError) throw error;
    throw invalidArgument(`cannot encode the ${noun}: reading it threw ${describe(error)}`);
  }
}

function corrupt(message: string, cause?: unknown): RunlogError {
  return new RunlogError('Corrupt', message, { cause });
}

function readUint32LE(bytes: Uint8Array, at: number): number {
  return (bytes[at]! | (bytes[at + 1]! << 8) | (bytes[at + 2]! << 16) | (bytes[at + 3]! << 24)) >>> 0;
}

function hex(byte: number): string {
  return byte.toString(16).padStart(2, '0');
}

/** The released schemas, read from schemas/ once, at module load. */
export const RELEASED_SCHEMAS: readonly SchemaVersion[] = loadSchemaDir();
const codec = createCodec(RELEASED_SCHEMAS);

export function encodeEvent(event: RunlogEvent): Uint8Array {
  return codec.encode(event);
}

export function decodeEvent(bytes: Uint8Array): RunlogEvent {
  return codec.decode(bytes);
}

/** A fold's decodeEventAt (Codec.foldDecoder): for a fold that keeps no reference to the events of the types `unread` names. */
export function eventFoldDecoder(unread: UnreadFields<EventType>): (buf: Buffer, start: number, end: number) => RunlogEvent {
  return codec.foldDecoder(unread);
}

/** decodeEvent of bytes [start, end) of `buf`, decoded where they lie (a replay's read buffer). */
export function decodeEventAt(buf: Buffer, start: number, end: number): RunlogEvent {
  return codec.decodeAt(buf, start, end);
}

/** The newest JSON schema of an event type, as in schemas/ (deep-frozen). */
export function schemaFor(eventType: EventType): AvroRecordSchema {
  return codec.schemaFor(eventType);
}

/** CRC-64-AVRO fingerprint (unsigned 64-bit) of the newest schema of an event type. */
export function writerSchemaFingerprint(eventType: EventType): bigint {
  return codec.fingerprintOf(eventType);
}
