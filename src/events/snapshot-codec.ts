/**
 * The codec of partition snapshots (schemas/snapshots/, snapshot-types.ts): Avro
 * single-object encoding as events (codec.ts), marker, the writer schema's fingerprint, the
 * body. A snapshot is a PartitionSnapshot whose `state` is a PartitionState encoded the same
 * way; its checksum covers the envelope's fields and the state's bytes. Anything that does
 * not decode whole, or whose checksum does not match, is Corrupt: the reader then ignores
 * the snapshot (src/projector/snapshots.ts), it never trusts a part of one.
 */
import { constants } from 'node:buffer';
import { createHash } from 'node:crypto';
import type avsc from 'avsc';
import { RunlogError } from '../errors.ts';
import { avroType, avroViewType } from './avro-types.ts';
import {
  compileBodyWriter,
  resetShort,
  writeInt,
  writeLong,
  writeString,
  writeVarint,
  wroteShort,
  type BodyWriter,
  type SelfWriting,
} from './body-writer.ts';
import { avroFieldSkippers, BytesCursor, type Skip } from './avro-skip.ts';
import { SINGLE_OBJECT_MARKER } from './codec.ts';
import { fingerprintBytesLE } from './rabin.ts';
import { SCHEMA_DIR, loadSchemaFamily, type SchemaFamily, type SchemaVersion } from './schemas.ts';
import {
  SNAPSHOT_FORMAT,
  type PartitionSnapshot,
  type PartitionState,
  type SnapshotColumn,
  type SnapshotEntry,
  type SnapshotThread,
} from './snapshot-types.ts';
import type { Outcome } from './types.ts';

export type SnapshotSchemaName = 'PartitionSnapshot' | 'PartitionState';

export const SNAPSHOT_SCHEMAS: SchemaFamily<SnapshotSchemaName> = {
  namespace: 'runlog.snapshots',
  names: ['PartitionSnapshot', 'PartitionState'],
  dir: new URL('snapshots/', SCHEMA_DIR),
};

/** The released snapshot schemas, read from schemas/snapshots/ once, at module load. */
export const RELEASED_SNAPSHOT_SCHEMAS: readonly SchemaVersion<SnapshotSchemaName>[] = loadSchemaFamily(SNAPSHOT_SCHEMAS);

const HEADER_LENGTH = 10;
/** The single-object header's length: marker and fingerprint. */
export const SNAPSHOT_HEADER_LENGTH = HEADER_LENGTH;
/** The largest buffer Node allocates. */
const MAX_LENGTH = constants.MAX_LENGTH;
const OUTCOMES: ReadonlySet<string> = new Set<Outcome>(['succeeded', 'failed', 'cancelled', 'expired', 'threadDeleted']);

interface Form {
  readonly file: string;
  readonly type: avsc.Type;
  /** The same schema read with bytes as views of the input (no copy of a state's columns). */
  readonly viewType: avsc.Type;
  readonly header: Buffer;
  /** Writes the body straight from the value (body-writer.ts); null: always avsc. */
  readonly body: BodyWriter | null;
  /** The size of the buffer the compiled writer is first given: the last snapshot's, and a quarter more. */
  sizeHint: number;
}

function formOf(name: SnapshotSchemaName): Form {
  // One version of each so far: the newest is the one written and the only one read.
  const version = RELEASED_SNAPSHOT_SCHEMAS.filter((s) => s.eventType === name).at(-1)!;
  const header = Buffer.alloc(HEADER_LENGTH);
  header[0] = SINGLE_OBJECT_MARKER[0];
  header[1] = SINGLE_OBJECT_MARKER[1];
  header.set(fingerprintBytesLE(version.fingerprint), 2);
  return {
    file: version.file,
    type: avroType(version.schema),
    viewType: avroViewType(version.schema),
    header,
    body: compileBodyWriter(version.schema),
    sizeHint: 64 << 10,
  };
}

const ENVELOPE = formOf('PartitionSnapshot');
const STATE = formOf('PartitionState');

/** The state's `threads` field (an array of Thread, each an array of Entry), for the open entries written across turns. */
const THREADS_TYPE = (STATE.type as avsc.types.RecordType).field('threads').type as avsc.types.ArrayType;
const ENTRY_TYPE = ((THREADS_TYPE.itemsType as avsc.types.RecordType).field('open').type as avsc.types.ArrayType).itemsType;

/**
 * One open entry as avsc writes it in a state's `threads`: for an entry the compiled writer
 * declines (projections/open-threads-writing.ts), which avsc then writes or refuses.
 */
export function encodeSnapshotEntry(entry: SnapshotEntry): Uint8Array {
  try {
    return ENTRY_TYPE.toBuffer({ ...entry, input: asBuffer(entry.input), result: entry.result === null ? null : asBuffer(entry.result) });
  } catch (error) {
    throw new RunlogError('InvalidArgument', `cannot encode open entry ${entry.entryId} into a snapshot: ${(error as Error).message}`);
  }
}

/** The bytes of a state's `threads` field back as values (for avsc, when the compiled writer declines another field of the state). */
export function decodeSnapshotThreads(bytes: Uint8Array): SnapshotThread[] {
  return THREADS_TYPE.fromBuffer(asBuffer(bytes)) as SnapshotThread[];
}

/** The single-object header a snapshot's envelope or state starts with (snapshot-stream.ts reads them in place). */
export function snapshotHeader(name: SnapshotSchemaName): Buffer {
  return (name === 'PartitionSnapshot' ? ENVELOPE : STATE).header;
}

/**
 * The compiled writer's encoding of `value` (the bytes avsc writes: body-writer.ts), or null
 * when it declines the value (then avsc encodes or refuses it). A buffer found too small is
 * replaced by one twice as large. `room`: bytes left free before the encoding and after it
 * (a state's, for its envelope to be written around it: encodeSnapshot).
 */
function encodeCompiled(
  form: Form,
  body: BodyWriter,
  value: Record<string, unknown>,
  atLeast: number,
  room: Room,
  prepared: Buffer | null,
): Uint8Array | null {
  const { before, after } = room;
  for (let size = firstSize(form, atLeast, room); ; size = Math.min(size * 2, MAX_LENGTH)) {
    // The caller's buffer first, if it is large enough (its memory touched already: encodeSnapshotState).
    const buf = prepared !== null && prepared.length >= size ? prepared : Buffer.allocUnsafeSlow(size);
    prepared = null;
    size = buf.length;
    form.header.copy(buf, before);
    resetShort();
    let end: number;
    try {
      end = body(value, buf.subarray(0, size - after), before + HEADER_LENGTH);
    } catch {
      return null; // a value that throws when read (a getter, a bigint where an int is): avsc says why
    }
    if (end >= 0) {
      form.sizeHint = Math.min(Math.max(64 << 10, Math.ceil((end - before) * 1.25)), MAX_LENGTH);
      // Handed out in the buffer it was written in, however much of it is used: a snapshot's buffer lives until it is saved,
      // and copying it into one of its own would take a turn of fresh memory the size of the snapshot (Buffer#slice, used
      // here before, copied nothing).
      const encoded = new Uint8Array(buf.buffer, buf.byteOffset + before, end - before);
      if (before + after > 0) roomy.add(encoded);
      return encoded;
    }
    if (!wroteShort() || size === MAX_LENGTH) return null;
  }
}

/** The size of the buffer encodeCompiled first writes into. */
function firstSize(form: Form, atLeast: number, room: Room): number {
  return Math.min(Math.max(form.sizeHint, atLeast) + room.before + room.after, MAX_LENGTH);
}

/** Bytes left free around an encoding. */
interface Room {
  before: number;
  after: number;
}

const NO_ROOM: Room = { before: 0, after: 0 };
/** Around a state: the envelope's fields before it (a logId of up to ~300 bytes; a longer one is copied) and its checksum after. */
const ENVELOPE_ROOM: Room = { before: 1024, after: 1 + 32 };

/** States encoded here with room around them that no envelope has used yet. */
const roomy = new WeakSet<Uint8Array>();

function encode(
  form: Form,
  value: Record<string, unknown>,
  avscValue: () => unknown = () => value,
  atLeast = 0,
  room = NO_ROOM,
  prepared: Buffer | null = null,
): Uint8Array {
  if (form.body !== null) {
    const bytes = encodeCompiled(form, form.body, value, atLeast, room, prepared);
    if (bytes !== null) return bytes;
  }
  const body = form.type.toBuffer(avscValue());
  const out = Buffer.allocUnsafe(HEADER_LENGTH + body.length);
  form.header.copy(out, 0);
  body.copy(out, HEADER_LENGTH);
  return new Uint8Array(out.buffer, out.byteOffset, out.length); // not a Buffer: its slice() would share memory
}

function decode(form: Form, bytes: Uint8Array): unknown {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (buf.length < HEADER_LENGTH || !buf.subarray(0, HEADER_LENGTH).equals(form.header)) {
    throw corrupt(`not a ${form.file} record: its ${HEADER_LENGTH}-byte header is not ${form.header.toString('hex')}`);
  }
  try {
    return form.viewType.fromBuffer(buf.subarray(HEADER_LENGTH));
  } catch (error) {
    throw corrupt(`invalid ${form.file} body (${buf.length} bytes): ${(error as Error).message}`, error);
  }
}

function corrupt(message: string, cause?: unknown): RunlogError {
  return new RunlogError('Corrupt', message, cause === undefined ? {} : { cause });
}

/** SHA-256 of the envelope's fields (each in decimal, newline-terminated) and the state's bytes. */
export function snapshotChecksum(snapshot: Omit<PartitionSnapshot, 'checksum'>): Uint8Array {
  const hash = createHash('sha256');
  hash.update(snapshotChecksumPrefix(snapshot), 'utf8');
  hash.update(snapshot.state);
  return hash.digest();
}

/**
 * A snapshot's open entries by thread, written straight from the view's entries
 * (projections/open-snapshot.ts): the bytes the compiled writer writes for their values, with
 * the values themselves at hand for avsc when it declines.
 */
export interface ThreadsToWrite extends SelfWriting {
  /** About how many bytes they take (to size the buffer: a buffer found short is written again, twice as large). */
  readonly estimatedBytes: number;
  values(): SnapshotThread[];
}

/**
 * A snapshot's ticket index columns (closedIndex) whose bytes are filled in after the state is
 * encoded (projections/ticket-columns-writer.ts), a stretch of rows at a time: the compiled
 * writer writes each column's name, its bytes' length and its strings, and leaves room for its
 * bytes; avsc, when the compiled writer declines, takes `values()`, the columns whole.
 */
export interface ColumnsToWrite extends SelfWriting {
  /** How many bytes the columns' elements take in all. */
  readonly estimatedBytes: number;
  values(): SnapshotColumn[];
  /** The state was encoded into `encoded`: what writeAvro last wrote at position p of its buffer lies at p - shift there. */
  placed(encoded: Uint8Array, shift: number): void;
}

/** A view's state to encode: its open entries as values, or written straight from the view; its ticket index's columns whole, or filled in after. */
export type StateToWrite = Omit<PartitionState, 'threads' | 'closedIndex'> & {
  threads: SnapshotThread[] | ThreadsToWrite;
  closedIndex: SnapshotColumn[] | ColumnsToWrite;
};

/** What the checksum covers before the state's bytes: the envelope's fields in decimal, each newline-terminated. */
export function snapshotChecksumPrefix(
  fields: Pick<PartitionSnapshot, 'format' | 'logId' | 'partition' | 'nextOffset' | 'takenAt'>,
): string {
  const { format, logId, partition, nextOffset, takenAt } = fields;
  return `${format}\n${logId}\n${partition}\n${nextOffset}\n${takenAt}\n`;
}

/**
 * A view's state, encoded (the envelope follows once the offset it covers is durable).
 * `prepared`: a buffer of snapshotStateRoom's size whose memory the caller touched already,
 * a stretch a turn (src/projector/snapshots.ts), written into if the state fits: fresh memory
 * faulted in by the encoding itself took a turn of ~1 ms a MB here.
 */
export function encodeSnapshotState(state: StateToWrite, prepared: Buffer | null = null): Uint8Array {
  const { threads, closedIndex: columns } = state;
  const asValues = (): PartitionState => ({
    ...state,
    threads: Array.isArray(threads) ? threads : threads.values(),
    closedIndex: Array.isArray(columns) ? columns : columns.values(),
  });
  const encoded = encode(
    STATE,
    state as unknown as Record<string, unknown>,
    () => withBuffers(asValues()),
    stateAtLeast(state),
    ENVELOPE_ROOM,
    prepared,
  );
  // The compiled writer wrote the state from byte `before` of its buffer on (encodeCompiled), the bytes handed out or copied.
  if (!Array.isArray(columns)) columns.placed(encoded, ENVELOPE_ROOM.before);
  return encoded;
}

/** The size of the buffer encodeSnapshotState first writes `state` into (its `prepared`). */
export function snapshotStateRoom(state: StateToWrite): number {
  return firstSize(STATE, stateAtLeast(state), ENVELOPE_ROOM);
}

/** About how many bytes `state` takes, and room to spare. */
function stateAtLeast(state: StateToWrite): number {
  const { threads, closedIndex: columns } = state;
  let atLeast = Array.isArray(threads) ? 0 : threads.estimatedBytes;
  if (Array.isArray(columns)) for (const column of columns) atLeast += column.bytes.byteLength + 16 * column.strings.length;
  else atLeast += columns.estimatedBytes;
  return atLeast + (64 << 10);
}

/** avsc writes bytes from Buffers only (the compiled writer any Uint8Array): the state's byte fields as Buffers over the same memory. */
function withBuffers(state: PartitionState): PartitionState {
  const entry = (e: SnapshotEntry): SnapshotEntry => ({
    ...e,
    input: asBuffer(e.input),
    result: e.result === null ? null : asBuffer(e.result),
  });
  return {
    ...state,
    ticketKey: state.ticketKey === null ? null : { ...state.ticketKey, secret: asBuffer(state.ticketKey.secret) },
    threads: state.threads.map((thread) => ({ ...thread, open: thread.open.map(entry) })),
    closedEntries: state.closedEntries.map((closed) => ({ ...closed, entry: entry(closed.entry) })),
    closedIndex: state.closedIndex.map((column) => ({ ...column, bytes: asBuffer(column.bytes) })),
  };
}

function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/**
 * snapshotChecksum, the state hashed a stretch of `stretchBytes` at a time with `between()`
 * awaited after each: hashing a large state (hundreds of MB at millions of closed tickets)
 * then holds no turn of the event loop for long.
 */
export async function snapshotChecksumInStretches(
  snapshot: Omit<PartitionSnapshot, 'checksum'>,
  between: () => Promise<void>,
  stretchBytes = 2 << 20,
): Promise<Uint8Array> {
  const hash = createHash('sha256');
  hash.update(snapshotChecksumPrefix(snapshot), 'utf8');
  const state = snapshot.state;
  for (let at = 0; at < state.byteLength; at += stretchBytes) {
    hash.update(state.subarray(at, at + stretchBytes));
    if (at + stretchBytes < state.byteLength) await between();
  }
  return hash.digest();
}

/**
 * A snapshot of an encoded state, checksummed and encoded (`checksum`: its checksum, when
 * computed already: snapshotChecksumInStretches). A state encodeSnapshotState left
 * room around gets its envelope written around it, in place (the same bytes as encoding the
 * envelope whole, without a second buffer of the snapshot's size: fresh memory is what a
 * large snapshot costs most here); any other is copied into the envelope.
 */
export function encodeSnapshot(fields: Omit<PartitionSnapshot, 'format' | 'checksum'>, checksum?: Uint8Array): Uint8Array {
  const envelope = { format: SNAPSHOT_FORMAT, ...fields };
  checksum ??= snapshotChecksum(envelope);
  const { state } = envelope;
  const value = { ...envelope, state: asBuffer(state), nextOffset: Number(envelope.nextOffset), checksum: asBuffer(checksum) };
  return (roomy.has(state) && envelopeAround(value, state)) || encode(ENVELOPE, value);
}

/**
 * Writes the envelope `value` around its state, in the room encodeCompiled left: its head
 * (header, format, logId, partition, nextOffset, takenAt, the state's length) just before the
 * state, its checksum just after. Null (nothing written) when a field is declined or the head
 * does not fit.
 */
function envelopeAround(value: EnvelopeValue, state: Uint8Array): Uint8Array | null {
  const checksum = value.checksum;
  // Room for the worst case of each field (the string's as the compiled writer counts it); what is written must fit before the state.
  const head = Buffer.allocUnsafe(64 + 3 * (typeof value.logId === 'string' ? value.logId.length : 0));
  ENVELOPE.header.copy(head, 0);
  resetShort();
  let pos = writeInt(value.format, head, HEADER_LENGTH);
  if (pos >= 0) pos = writeString(value.logId, head, pos);
  if (pos >= 0) pos = writeInt(value.partition, head, pos);
  if (pos >= 0) pos = writeLong(value.nextOffset, head, pos);
  if (pos >= 0) pos = writeLong(value.takenAt, head, pos);
  if (pos >= 0) pos = writeLong(state.byteLength, head, pos);
  const all = Buffer.from(state.buffer, 0, state.buffer.byteLength);
  const end = state.byteOffset + state.byteLength;
  if (pos < 0 || pos > state.byteOffset || checksum.length !== ENVELOPE_ROOM.after - 1 || end + ENVELOPE_ROOM.after > all.length)
    return null;
  roomy.delete(state); // its room is taken
  const start = state.byteOffset - pos;
  head.copy(all, start, 0, pos);
  const at = writeVarint(checksum.length, all, end); // one byte: 32 is 0x40
  all.set(checksum, at);
  return new Uint8Array(all.buffer, start, at + checksum.length - start);
}

interface EnvelopeValue {
  format: number;
  logId: string;
  partition: number;
  nextOffset: number;
  takenAt: number;
  checksum: Buffer;
}

/**
 * The envelope of a snapshot; Corrupt if it does not decode, is of another format, or its
 * checksum does not match. Its state and checksum are views of `bytes` (no copy).
 */
export function decodeSnapshot(bytes: Uint8Array): PartitionSnapshot {
  const raw = decode(ENVELOPE, bytes) as Omit<PartitionSnapshot, 'nextOffset'> & { nextOffset: number };
  const snapshot: PartitionSnapshot = { ...raw, nextOffset: BigInt(raw.nextOffset) };
  if (snapshot.format !== SNAPSHOT_FORMAT) throw corrupt(`snapshot format ${snapshot.format} is not ${SNAPSHOT_FORMAT}`);
  if (!Buffer.from(snapshotChecksum(snapshot)).equals(Buffer.from(snapshot.checksum))) {
    throw corrupt(`the snapshot's checksum does not match its content (damaged)`);
  }
  return snapshot;
}

/** One skipper per field of the newest PartitionState schema (avro-skip.ts; snapshot-stream.ts walks with them too). */
export const STATE_FIELD_SKIPPERS: readonly Skip[] = avroFieldSkippers(
  RELEASED_SNAPSHOT_SCHEMAS.filter((s) => s.eventType === 'PartitionState').at(-1)!.schema,
);

/**
 * A snapshot's state. Byte fields are views of `bytes`: copy what is kept. Its fields are walked
 * first (avro-skip.ts), bounded by its bytes: avsc believes an array's count (it reads on past
 * the end of its buffer and checks only once done), so a count rotten into 2^30 where the bytes
 * hold none would have it build that many items before finding them short. Walked, such a
 * count is Corrupt at the first item that runs past the state.
 */
export function decodeSnapshotState(bytes: Uint8Array): PartitionState {
  if (bytes.length >= HEADER_LENGTH) {
    const cursor = new BytesCursor(bytes, HEADER_LENGTH);
    try {
      for (const skip of STATE_FIELD_SKIPPERS) skip(cursor);
    } catch (error) {
      throw corrupt(`invalid ${STATE.file} body (${bytes.length} bytes): ${(error as Error).message}`, error);
    }
  } // else: shorter than its header, which decode refuses
  return decodeWalkedState(bytes);
}

/**
 * A state whose fields the caller has already walked whole with STATE_FIELD_SKIPPERS, within
 * its bytes (snapshot-stream.ts readSnapshotState walks them where they lie): decoded without
 * walking them again. Never hand it bytes not walked (see decodeSnapshotState).
 */
export function decodeWalkedState(bytes: Uint8Array): PartitionState {
  const state = decode(STATE, bytes) as PartitionState;
  for (const entry of allEntries(state)) {
    if (entry.outcome !== null && !OUTCOMES.has(entry.outcome)) throw corrupt(`entry ${entry.entryId} has no outcome ${entry.outcome}`);
  }
  for (const answer of state.answers) {
    if (answer.command !== 'submit' && answer.command !== 'cancel')
      throw corrupt(`answer ${answer.requestId} has no command ${answer.command}`);
  }
  return state;
}

function* allEntries(state: PartitionState): Iterable<{ entryId: string; outcome: string | null }> {
  for (const thread of state.threads) yield* thread.open;
  for (const closed of state.closedEntries) yield closed.entry;
}
