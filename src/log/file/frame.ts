/**
 * The on-disk frame. One group-commit write is exactly one frame, so a frame is the unit
 * of atomicity: after a crash a frame is either whole (its CRC checks) or it is the torn
 * tail of the last segment.
 *
 *   frame   := magic u32 | crc u32 | length u32 | payload[length]
 *              crc = CRC32 over length and payload (so a damaged length is caught too)
 *   payload := baseOffset u64 | count u32 | record * count
 *   record  := offsetDelta u32 | keyLength u32 | valueLength i32 (-1: tombstone) | key utf8 | value
 *
 * All integers little-endian. A record's offset is baseOffset + offsetDelta; deltas grow
 * strictly within a frame (appends use 0,1,2…; compacted frames have gaps).
 *
 * A segment that is no longer the active one ends with a seal, the one frame of its kind:
 *
 *   seal    := sealMagic u32 | crc u32 | length u32 (8) | endOffset u64
 *
 * endOffset is where the next segment begins: the segments of a partition chain from 0
 * with no gap, so a missing segment shows (see recovery.ts).
 */
import { crc32 } from 'node:zlib';
import { RECORD_OVERHEAD_BYTES, type LogRecord, type RecordLimits, type RecordVisitor } from '../event-log.ts';

export const FRAME_MAGIC = 0x52_4c_47_31; // 'RLG1'
export const SEAL_MAGIC = 0x52_4c_53_4c; // 'LSLR' on disk
export const FRAME_HEADER_BYTES = 12;
export const SEAL_BYTES = FRAME_HEADER_BYTES + 8;
const PAYLOAD_HEADER_BYTES = 12;
const RECORD_HEADER_BYTES = 12;
/** Frames larger than this are refused on read as corrupt rather than allocated. */
export const MAX_FRAME_BYTES = 1 << 30;
export const MAX_OFFSET_DELTA = 0xffff_ffff;

/**
 * What one append may hold so that its frame (one append is at most one frame: segment-appender.ts)
 * stays within MAX_FRAME_BYTES: the payload header, then per record less than
 * RECORD_OVERHEAD_BYTES of header. A record alone must fit an append.
 */
const MAX_APPEND_BYTES = MAX_FRAME_BYTES - PAYLOAD_HEADER_BYTES;
export const FRAME_LIMITS: RecordLimits = { maxAppendBytes: MAX_APPEND_BYTES, maxRecordBytes: MAX_APPEND_BYTES - RECORD_OVERHEAD_BYTES };

export function recordBytes(key: string, value: Uint8Array | null): number {
  return RECORD_HEADER_BYTES + Buffer.byteLength(key) + (value === null ? 0 : value.length);
}

export function frameBytes(recordsBytes: number): number {
  return FRAME_HEADER_BYTES + PAYLOAD_HEADER_BYTES + recordsBytes;
}

/**
 * Encodes `records` (offsets increasing, each within MAX_OFFSET_DELTA of the first) as one
 * frame. `size` is frameBytes of the sum of recordBytes, computed by the caller.
 */
export function encodeFrame(records: readonly LogRecord[], size: number): Buffer {
  const buf = Buffer.allocUnsafe(size);
  const base = records[0]!.offset;
  buf.writeUInt32LE(FRAME_MAGIC, 0);
  buf.writeUInt32LE(size - FRAME_HEADER_BYTES, 8);
  buf.writeBigUInt64LE(base, 12);
  buf.writeUInt32LE(records.length, 20);
  let pos = 24;
  for (const { offset, key, value } of records) {
    buf.writeUInt32LE(Number(offset - base), pos);
    const keyLength = buf.write(key, pos + RECORD_HEADER_BYTES, 'utf8');
    buf.writeUInt32LE(keyLength, pos + 4);
    buf.writeInt32LE(value === null ? -1 : value.length, pos + 8);
    pos += RECORD_HEADER_BYTES + keyLength;
    if (value !== null) {
      buf.set(value, pos);
      pos += value.length;
    }
  }
  if (pos !== size) throw new Error(`frame size mismatch: computed ${size}, wrote ${pos}`);
  buf.writeUInt32LE(crc32(buf.subarray(8)), 4);
  return buf;
}

/** The seal ending a segment whose successor begins at `endOffset`. */
export function encodeSeal(endOffset: bigint): Buffer {
  const buf = Buffer.alloc(SEAL_BYTES);
  buf.writeUInt32LE(SEAL_MAGIC, 0);
  buf.writeUInt32LE(SEAL_BYTES - FRAME_HEADER_BYTES, 8);
  buf.writeBigUInt64LE(endOffset, 12);
  buf.writeUInt32LE(crc32(buf.subarray(8)), 4);
  return buf;
}

/** What is at a position of a buffer: a whole checked frame or seal, too few bytes, or damage. */
export type FrameCheck =
  | { kind: 'frame'; end: number; base: bigint; count: number }
  | { kind: 'seal'; end: number; endOffset: bigint }
  | { kind: 'incomplete'; need: number }
  | { kind: 'bad'; reason: string; length: number | null };

/**
 * Checks the frame starting at `pos` of `buf` (bytes up to `limit` are valid data). A frame
 * ending at or before `checkedTo` is not CRC-checked again: this process checked it already
 * (the active segment's frames, at open: recovery.ts).
 */
export function checkFrame(buf: Buffer, pos: number, limit: number, checkedTo = -1): FrameCheck {
  if (limit - pos < FRAME_HEADER_BYTES) return { kind: 'incomplete', need: FRAME_HEADER_BYTES };
  if (buf.readUInt32LE(pos) === SEAL_MAGIC) return checkSeal(buf, pos, limit);
  if (buf.readUInt32LE(pos) !== FRAME_MAGIC) return { kind: 'bad', reason: 'bad magic', length: null };
  const length = buf.readUInt32LE(pos + 8);
  if (length < PAYLOAD_HEADER_BYTES || length > MAX_FRAME_BYTES) {
    return { kind: 'bad', reason: `implausible frame length ${length}`, length: null };
  }
  const end = pos + FRAME_HEADER_BYTES + length;
  if (end > limit) return { kind: 'incomplete', need: FRAME_HEADER_BYTES + length };
  if (end > checkedTo && crcOf(buf, pos + 8, end) !== buf.readUInt32LE(pos + 4)) return { kind: 'bad', reason: 'CRC mismatch', length };
  return { kind: 'frame', end, base: buf.readBigUInt64LE(pos + 12), count: buf.readUInt32LE(pos + 20) };
}

/**
 * The CRC32 of bytes [start, end) of `buf`, through a plain Uint8Array view: Buffer's subarray
 * builds each view through its species constructor, and a replay of small frames checks one
 * CRC per frame.
 */
function crcOf(buf: Buffer, start: number, end: number): number {
  return crc32(new Uint8Array(buf.buffer, buf.byteOffset + start, end - start));
}

function checkSeal(buf: Buffer, pos: number, limit: number): FrameCheck {
  if (buf.readUInt32LE(pos + 8) !== SEAL_BYTES - FRAME_HEADER_BYTES)
    return { kind: 'bad', reason: 'implausible seal length', length: null };
  if (limit - pos < SEAL_BYTES) return { kind: 'incomplete', need: SEAL_BYTES };
  if (crcOf(buf, pos + 8, pos + SEAL_BYTES) !== buf.readUInt32LE(pos + 4)) return { kind: 'bad', reason: 'seal CRC mismatch', length: 8 };
  return { kind: 'seal', end: pos + SEAL_BYTES, endOffset: buf.readBigUInt64LE(pos + 12) };
}

/**
 * Values are copied out of the (large) read buffer into 64 KiB slabs and handed out as
 * views: one ArrayBuffer allocation per value costs more than the rest of decoding, and a
 * view never keeps more than its slab alive. Large values get a buffer of their own.
 */
const SLAB_BYTES = 64 << 10;
const OWN_BUFFER_BYTES = 4 << 10;
let slab = new Uint8Array(SLAB_BYTES);
let slabUsed = 0;

function copyValue(buf: Buffer, start: number, end: number): Uint8Array {
  const length = end - start;
  if (length >= OWN_BUFFER_BYTES) return Uint8Array.prototype.slice.call(buf, start, end);
  const value = slabSpace(length);
  value.set(buf.subarray(start, end));
  return value;
}

/** `length` bytes of the current slab (a new slab if it is full). */
function slabSpace(length: number): Uint8Array {
  if (slabUsed + length > SLAB_BYTES) {
    slab = new Uint8Array(SLAB_BYTES);
    slabUsed = 0;
  }
  // subarray, not `new Uint8Array(buffer, offset, length)`: V8 makes it about twice as fast.
  const value = slab.subarray(slabUsed, slabUsed + length);
  slabUsed += length;
  return value;
}

interface Utf8Slicing {
  utf8Slice(start: number, end: number): string;
}

/** The UTF-8 text of bytes [start, end): Buffer's own slice, without toString's argument handling. */
function utf8(buf: Buffer, start: number, end: number): string {
  return (buf as unknown as Utf8Slicing).utf8Slice(start, end);
}

/**
 * The little-endian u32 (i32) at `at` of `buf`, read byte by byte: Buffer's readUInt32LE
 * validates its argument on every call, which costs more than the read in a walk over every
 * record. Callers check that the four bytes lie inside the frame first.
 */
function uint32At(buf: Buffer, at: number): number {
  return (buf[at]! | (buf[at + 1]! << 8) | (buf[at + 2]! << 16) | (buf[at + 3]! << 24)) >>> 0;
}

function int32At(buf: Buffer, at: number): number {
  return buf[at]! | (buf[at + 1]! << 8) | (buf[at + 2]! << 16) | (buf[at + 3]! << 24);
}

/**
 * Walks the records of a checked frame at `pos`, calling `each` with its offset's delta from
 * the frame's base for those whose delta is >= `skipBelow`. Returns false if the payload's
 * structure is inconsistent (only a bug or deliberate damage can do that: the CRC matched).
 */
function walkFrame(
  buf: Buffer,
  pos: number,
  end: number,
  skipBelow: number,
  each: (delta: number, keyStart: number, valueStart: number, valueEnd: number) => void,
): boolean {
  const count = uint32At(buf, pos + 20);
  let p = pos + FRAME_HEADER_BYTES + PAYLOAD_HEADER_BYTES;
  for (let i = 0; i < count; i++) {
    if (p + RECORD_HEADER_BYTES > end) return false;
    const delta = uint32At(buf, p);
    const keyLength = uint32At(buf, p + 4);
    const valueLength = int32At(buf, p + 8);
    const keyStart = p + RECORD_HEADER_BYTES;
    const valueStart = keyStart + keyLength;
    p = valueStart + Math.max(valueLength, 0);
    if (p > end || valueLength < -1) return false;
    if (delta >= skipBelow) each(delta, keyStart, valueStart, valueLength < 0 ? -1 : p);
  }
  return p === end;
}

/** The first delta of a frame at `base` whose offset is >= `from` (Infinity: none can be). */
function skipBelowOf(base: bigint, from: bigint): number {
  return from <= base ? -1 : from - base > BigInt(MAX_OFFSET_DELTA) ? Infinity : Number(from - base);
}

/** The largest base offset whose frame's offsets are all safe integers. */
const MAX_SMALL_BASE = BigInt(Number.MAX_SAFE_INTEGER) - BigInt(MAX_OFFSET_DELTA);

/** The frame's base offset as a number when every offset of the frame is a safe integer, else -1. */
function smallBaseOf(base: bigint): number {
  return base <= MAX_SMALL_BASE ? Number(base) : -1;
}

/**
 * Decodes the records of a checked frame at `pos`, calling `each` for those with an offset
 * >= `from`. Values are copied out of `buf`, or with `views` are views of it (for callers
 * that decode them at once: a view keeps all of `buf` alive). Returns false if the
 * payload's structure is inconsistent (only a bug or deliberate damage can do that: the
 * CRC matched).
 */
export function decodeFrame(
  buf: Buffer,
  pos: number,
  end: number,
  from: bigint,
  each: (record: LogRecord) => void,
  views = false,
): boolean {
  const base = buf.readBigUInt64LE(pos + 12);
  // Offsets as numbers relative to base keep the loop free of bigint arithmetic.
  const smallBase = smallBaseOf(base);
  // Views are plain Uint8Arrays: V8's own subarray, not Buffer's (which builds each through its species).
  const plain = views ? new Uint8Array(buf.buffer, buf.byteOffset, buf.length) : null;
  return walkFrame(buf, pos, end, skipBelowOf(base, from), (delta, keyStart, valueStart, valueEnd) => {
    const key = utf8(buf, keyStart, valueStart);
    const value = valueEnd < 0 ? null : plain !== null ? plain.subarray(valueStart, valueEnd) : copyValue(buf, valueStart, valueEnd);
    each({ offset: smallBase >= 0 ? BigInt(smallBase + delta) : base + BigInt(delta), key, value });
  });
}

/** visitFrame's answers that are no offset: the frame's record structure is inconsistent; its offsets are not all safe integers. */
export const FRAME_INCONSISTENT = -2;
export const FRAME_OFFSETS_TOO_LARGE = -3;

/** What a visit may hand out: at most `max` records, of offsets below `below`. visitFrame counts them in `visited`, and sets `ended` once it met one at or past `below`. */
export interface VisitBudget {
  readonly max: number;
  readonly below: number;
  visited: number;
  ended: boolean;
}

/**
 * The records of a checked frame at `pos` (of base offset `base`, as checkFrame read it) with an offset >= `from`, handed to `visit` where they
 * lie, no record object made (a replay decodes each value at once), within `budget` (taken
 * from it). The frame is walked whole all the same. Answers the offset of the last record
 * visited (-1: none), FRAME_INCONSISTENT if the payload's structure is inconsistent, or
 * FRAME_OFFSETS_TOO_LARGE (nothing visited) if the frame's offsets are not all safe integers:
 * the caller then reads it with decodeFrame. One loop, no callback between it and `visit`: it
 * runs for every record of a replay.
 */
export function visitFrame(
  buf: Buffer,
  pos: number,
  end: number,
  base: bigint,
  from: bigint,
  budget: VisitBudget,
  visit: RecordVisitor,
): number {
  const smallBase = smallBaseOf(base);
  if (smallBase < 0) return FRAME_OFFSETS_TOO_LARGE;
  const skipBelow = skipBelowOf(base, from);
  const count = uint32At(buf, pos + 20);
  let last = -1;
  let p = pos + FRAME_HEADER_BYTES + PAYLOAD_HEADER_BYTES;
  for (let i = 0; i < count; i++) {
    if (p + RECORD_HEADER_BYTES > end) return FRAME_INCONSISTENT;
    const delta = uint32At(buf, p);
    const keyLength = uint32At(buf, p + 4);
    const valueLength = int32At(buf, p + 8);
    const keyStart = p + RECORD_HEADER_BYTES;
    const valueStart = keyStart + keyLength;
    p = valueStart + Math.max(valueLength, 0);
    if (p > end || valueLength < -1) return FRAME_INCONSISTENT;
    if (delta < skipBelow || budget.ended || budget.visited === budget.max) continue;
    const offset = smallBase + delta;
    if (offset >= budget.below) {
      budget.ended = true;
      continue;
    }
    budget.visited++;
    last = offset;
    visit(offset, buf, keyStart, valueStart, valueLength < 0 ? -1 : p);
  }
  return p === end ? last : FRAME_INCONSISTENT;
}

/**
 * Checks the record structure of a checked frame (deltas strictly increasing, lengths
 * inside the payload) and returns its last record's offset, or null if it is inconsistent.
 */
export function lastOffsetOfFrame(buf: Buffer, pos: number, end: number): bigint | null {
  const base = buf.readBigUInt64LE(pos + 12);
  const count = uint32At(buf, pos + 20);
  let p = pos + FRAME_HEADER_BYTES + PAYLOAD_HEADER_BYTES;
  let previous = -1;
  for (let i = 0; i < count; i++) {
    if (p + RECORD_HEADER_BYTES > end) return null;
    const delta = uint32At(buf, p);
    const valueLength = int32At(buf, p + 8);
    if (delta <= previous || valueLength < -1) return null;
    previous = delta;
    p += RECORD_HEADER_BYTES + uint32At(buf, p + 4) + Math.max(valueLength, 0);
  }
  return p === end && count > 0 ? base + BigInt(previous) : null;
}
