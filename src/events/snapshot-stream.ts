/**
 * Reading a snapshot from where it lies (a file) instead of from its bytes whole: the same
 * format and the same checks as snapshot-codec.ts's decodeSnapshot + decodeSnapshotState, but
 * the file is never read into one buffer. At 10M closed tickets a snapshot is ~600 MB, and
 * fresh memory costs ~4 ms a MB on the machines measured: reading it whole took longer than
 * everything else a restart does. Instead:
 *   1. the envelope's head (format, logId, partition, nextOffset, takenAt, the state's length)
 *      is parsed from the first bytes (readSnapshotHead);
 *   2. the checksum is computed over the state read a window at a time into one reused buffer,
 *      and compared with the stored one; the file must end right after it (verifySnapshotChecksum);
 *   3. only then is the state walked (readSnapshotState, or walkSnapshotState to decode later):
 *      the fields before the ticket index's columns are skipped (avro-skip.ts) and the columns'
 *      places noted, not read; the state's other fields (open entries, keys, answers) are
 *      walked, then read and decoded as decodeSnapshotState decodes them, with an empty
 *      closedIndex in the columns' place. The columns are then read a stretch at a time by
 *      whoever loads them (projections/snapshot-columns.ts sourcedColumns).
 * The source must not change between the steps (a file is read through one open handle; a
 * snapshot file is written once and renamed into place, never rewritten).
 */
import { createHash } from 'node:crypto';
import { Worker } from 'node:worker_threads';
import { RunlogError } from '../errors.ts';
import { readLength, readLong, type ByteCursor } from './avro-skip.ts';
import {
  RELEASED_SNAPSHOT_SCHEMAS,
  SNAPSHOT_HEADER_LENGTH,
  STATE_FIELD_SKIPPERS,
  decodeWalkedState,
  snapshotHeader,
  snapshotChecksumPrefix,
} from './snapshot-codec.ts';
import { SNAPSHOT_FORMAT, type PartitionState } from './snapshot-types.ts';

/** Where a snapshot's bytes lie, read by position. */
export interface SnapshotSource {
  readonly size: number;
  /** Fills `into` with the bytes from `position` on (Corrupt if the source ends first). */
  read(into: Uint8Array, position: number): void;
  /** An open file's descriptor, when the bytes are a file's: its checksum can then be computed on another thread (checksumAside). */
  readonly fd?: number;
}

/** The envelope's fields but the state and checksum, and where the state lies. */
export interface SnapshotHead {
  format: number;
  logId: string;
  partition: number;
  nextOffset: bigint;
  takenAt: number;
  stateStart: number;
  stateLength: number;
}

/** A ticket index column as the state holds it: its strings read, its bytes' place noted (not read). */
export interface SourcedColumn {
  name: string;
  strings: string[];
  /** Where its bytes lie in the source, and how many. */
  position: number;
  byteLength: number;
}

/** The bytes read at a time to checksum; also the cursor's window. */
const WINDOW = 4 << 20;

const STATE_SCHEMA = RELEASED_SNAPSHOT_SCHEMAS.filter((s) => s.eventType === 'PartitionState').at(-1)!.schema;
const CLOSED_INDEX_FIELD = STATE_SCHEMA.fields.findIndex((field) => field.name === 'closedIndex');
/** One skipper per field of the state, named types resolved across them (the ones decodeSnapshotState walks with). */
const SKIP_FIELD = STATE_FIELD_SKIPPERS;
/** Skips the state's fields before closedIndex, or after it. */
const skipFields = (cursor: ByteCursor, from: number, to: number): void => {
  for (let f = from; f < to; f++) SKIP_FIELD[f]!(cursor);
};
assertColumnShape();

/** The envelope's head (step 1 above). Corrupt if it is not a snapshot's. */
export function readSnapshotHead(source: SnapshotSource): SnapshotHead {
  const cursor = new WindowCursor(source, 0, source.size);
  cursor.expect(snapshotHeader('PartitionSnapshot'), 'PartitionSnapshot.v1.avsc');
  const format = readLong(cursor);
  const logId = cursor.string();
  const partition = readLong(cursor);
  const nextOffset = readLong(cursor);
  const takenAt = readLong(cursor);
  const stateLength = readLength(cursor);
  if (!Number.isSafeInteger(nextOffset)) throw corrupt(`a snapshot covering offsets up to ${nextOffset}`);
  return { format, logId, partition, nextOffset: BigInt(nextOffset), takenAt, stateStart: cursor.position, stateLength };
}

/** Step 2 above: the format is known, the checksum matches, and nothing follows it. Corrupt otherwise. */
export function verifySnapshotChecksum(source: SnapshotSource, head: SnapshotHead): void {
  const stored = storedChecksum(source, head);
  const hash = createHash('sha256');
  hash.update(snapshotChecksumPrefix(head), 'utf8');
  const { stateStart, stateLength } = head;
  const window = new Uint8Array(Math.min(WINDOW, stateLength));
  for (let at = stateStart; at < stateStart + stateLength; at += window.length) {
    const part = window.subarray(0, Math.min(window.length, stateStart + stateLength - at));
    source.read(part, at);
    hash.update(part);
  }
  matches(hash.digest(), stored);
}

/**
 * Step 2 computed on another thread (a file source: its descriptor is read there), so that the
 * state can be read meanwhile: resolves once the checksum matches, rejects Corrupt as
 * verifySnapshotChecksum throws. What was read meanwhile must not be used before it resolves.
 * The source must stay open until it settles.
 */
export function checksumAside(source: SnapshotSource & { fd: number }, head: SnapshotHead): Promise<void> {
  const stored = storedChecksum(source, head);
  const workerData = {
    fd: source.fd,
    prefix: snapshotChecksumPrefix(head),
    start: head.stateStart,
    length: head.stateLength,
    window: WINDOW,
  };
  return new Promise<Uint8Array>((resolve, reject) => {
    const worker = new Worker(HASH_WORKER, { eval: true, workerData, execArgv: [] });
    worker.once('message', (digest: Uint8Array) => resolve(digest));
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`the snapshot's checksum thread exited (${code}) without a digest`)));
  }).then((digest) => matches(digest, stored));
}

/** The worker of checksumAside: SHA-256 of the prefix and the state read from the descriptor a window at a time. */
const HASH_WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const { readSync } = require('node:fs');
const { createHash } = require('node:crypto');
const { fd, prefix, start, length, window } = workerData;
const hash = createHash('sha256');
hash.update(prefix, 'utf8');
const buffer = new Uint8Array(Math.min(window, length));
for (let at = start; at < start + length; ) {
  const got = readSync(fd, buffer, 0, Math.min(buffer.length, start + length - at), at);
  if (got === 0) throw new Error('the snapshot ends before its state does');
  hash.update(buffer.subarray(0, got));
  at += got;
}
parentPort.postMessage(hash.digest());
`;

/** The checksum stored after the state (the format checked, the state within the source, nothing after the checksum). */
function storedChecksum(source: SnapshotSource, head: SnapshotHead): Buffer {
  if (head.format !== SNAPSHOT_FORMAT) throw corrupt(`snapshot format ${head.format} is not ${SNAPSHOT_FORMAT}`);
  const end = head.stateStart + head.stateLength;
  if (end > source.size)
    throw corrupt(`a snapshot truncated: its state of ${head.stateLength} bytes runs past its end (byte ${source.size})`);
  const cursor = new WindowCursor(source, end, source.size);
  const stored = cursor.bytes(readLength(cursor));
  if (cursor.position !== source.size) throw corrupt(`invalid PartitionSnapshot.v1.avsc body (${source.size} bytes): trailing data`);
  return stored;
}

function matches(digest: Uint8Array, stored: Buffer): void {
  if (!Buffer.from(digest).equals(stored)) throw corrupt(`the snapshot's checksum does not match its content (damaged)`);
}

/** Step 3 above (after step 2): the state but its columns (closedIndex empty), and where the columns lie. */
export function readSnapshotState(source: SnapshotSource, head: SnapshotHead): { state: PartitionState; columns: SourcedColumn[] } {
  const { columns, decode } = walkSnapshotState(source, head);
  return { state: decode(), columns };
}

/**
 * Step 3 with the state's decode left to the caller: the state walked whole (every field
 * within its bytes, or Corrupt) and where the columns lie; `decode` answers the state
 * readSnapshotState answers. So the ticket index can be loaded from the columns before the
 * open entries are decoded: loading it brings full collections on, which then mark a heap
 * without them (tens of MB at 100k open entries).
 */
export function walkSnapshotState(source: SnapshotSource, head: SnapshotHead): { columns: SourcedColumn[]; decode: () => PartitionState } {
  const { stateStart, stateLength } = head;
  const end = stateStart + stateLength;
  const cursor = new WindowCursor(source, stateStart, end);
  cursor.expect(snapshotHeader('PartitionState'), 'PartitionState.v1.avsc');
  skipFields(cursor, 0, CLOSED_INDEX_FIELD);
  const columnsStart = cursor.position;
  const columns = readColumns(cursor);
  const columnsEnd = cursor.position;
  // The fields after walked too (within the state's bytes, or Corrupt) before avsc decodes anything: a
  // count rotten into 2^30 would otherwise have avsc build that many items (bit rot is only found by the
  // checksum, which may still be running: snapshots.ts sourcedView).
  skipFields(cursor, CLOSED_INDEX_FIELD + 1, SKIP_FIELD.length);
  if (cursor.position !== end) throw corrupt(`invalid PartitionState.v1.avsc body: trailing data`);
  // The state with an empty closedIndex (one 0: an array of no blocks) where the columns were.
  const before = columnsStart - stateStart;
  const rest = new Uint8Array(before + 1 + (end - columnsEnd));
  source.read(rest.subarray(0, before), stateStart);
  source.read(rest.subarray(before + 1), columnsEnd);
  return { columns, decode: () => decodeWalkedState(rest) }; // walked above, every field (the columns hand-read)
}

/** closedIndex: blocks of Column records (name, bytes, strings), the bytes skipped. */
function readColumns(cursor: WindowCursor): SourcedColumn[] {
  const columns: SourcedColumn[] = [];
  blocks(cursor, () => {
    const name = cursor.string();
    const byteLength = readLength(cursor);
    const position = cursor.position;
    cursor.skip(byteLength);
    const strings: string[] = [];
    blocks(cursor, () => void strings.push(cursor.string()));
    columns.push({ name, strings, position, byteLength });
  });
  return columns;
}

/** An Avro array's blocks: `item` once per item. */
function blocks(cursor: WindowCursor, item: () => void): void {
  for (;;) {
    let count = readLong(cursor);
    if (count === 0) return;
    if (count < 0) {
      count = -count;
      readLength(cursor); // the block's size in bytes
    }
    for (let i = 0; i < count; i++) item();
  }
}

/** The hand-read closedIndex above is the schema's: an array of records of a string, bytes and an array of strings. */
function assertColumnShape(): void {
  const type = STATE_SCHEMA.fields[CLOSED_INDEX_FIELD]!.type as { type: string; items: { fields: { name: string; type: unknown }[] } };
  const shape = JSON.stringify(type.items.fields.map((f) => [f.name, f.type]));
  if (
    type.type !== 'array' ||
    shape !==
      JSON.stringify([
        ['name', 'string'],
        ['bytes', 'bytes'],
        ['strings', { type: 'array', items: 'string' }],
      ])
  )
    throw new Error(`the snapshot's closedIndex is not an array of (name, bytes, strings): ${shape}`);
}

/** Reads a source from a position up to a limit, through a window of it kept in memory. */
class WindowCursor implements ByteCursor {
  readonly #window: Uint8Array;
  /** The source position of the window's first byte, and how many of its bytes are read. */
  #start = 0;
  #filled = 0;
  position: number;

  constructor(
    private readonly source: SnapshotSource,
    position: number,
    private readonly limit: number,
  ) {
    this.position = position;
    this.#window = new Uint8Array(Math.max(0, Math.min(WINDOW >> 4, limit - position)));
  }

  byte(): number {
    const at = this.position - this.#start;
    if (at >= 0 && at < this.#filled) {
      this.position++;
      return this.#window[at]!;
    }
    this.#need(1);
    this.#start = this.position;
    this.#filled = Math.min(this.#window.length, this.limit - this.position);
    this.source.read(this.#window.subarray(0, this.#filled), this.position);
    return this.#window[this.position++ - this.#start]!;
  }

  skip(count: number): void {
    this.#need(count);
    this.position += count;
  }

  /** The next `count` bytes, a copy. */
  bytes(count: number): Buffer {
    this.#need(count);
    const out = Buffer.alloc(count);
    this.source.read(out, this.position);
    this.position += count;
    return out;
  }

  string(): string {
    return this.bytes(readLength(this)).toString('utf8');
  }

  expect(header: Buffer, file: string): void {
    if (this.limit - this.position < header.length || !this.bytes(header.length).equals(header))
      throw corrupt(`not a ${file} record: its ${SNAPSHOT_HEADER_LENGTH}-byte header is not ${header.toString('hex')}`);
  }

  #need(count: number): void {
    if (this.position + count > this.limit)
      throw corrupt(`a snapshot truncated: ${count} bytes wanted at byte ${this.position} of ${this.limit}`);
  }
}

function corrupt(message: string): RunlogError {
  return new RunlogError('Corrupt', message);
}
