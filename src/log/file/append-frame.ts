/**
 * The appender's frames (the layout: frame.ts), built with one copy of each record.
 *
 * An append's records are encoded when it is queued (the caller may reuse its buffers once
 * append returns), straight into the bytes of a frame: FRAME_PREFIX_BYTES left free for the
 * frame and payload headers, then the records with offset deltas 0, 1, 2… counted from the
 * append's first record. A group of one append (the common case: a batch, or one caller) is
 * then written from that buffer as it is, its headers filled in; a group of several is copied
 * into one frame, each later append's deltas shifted by the records before it.
 */
import { crc32 } from 'node:zlib';
import type { AppendRecord } from '../event-log.ts';
import { FRAME_HEADER_BYTES, FRAME_MAGIC } from './frame.ts';

/** The frame header (magic, crc, length) and the payload header (base offset, count). */
export const FRAME_PREFIX_BYTES = FRAME_HEADER_BYTES + 12;
const RECORD_HEADER_BYTES = 12;

/** An append's records, encoded after FRAME_PREFIX_BYTES of room. */
export interface EncodedAppend {
  readonly buf: Buffer;
  readonly count: number;
  /** The records' bytes (buf.length - FRAME_PREFIX_BYTES). */
  readonly bytes: number;
}

interface Utf8Writing {
  utf8Write(text: string, offset: number, length: number): number;
}

export function encodeAppend(records: readonly AppendRecord[]): EncodedAppend {
  const keyBytes = records.map((record) => Buffer.byteLength(record.key));
  let bytes = 0;
  for (let i = 0; i < records.length; i++) bytes += RECORD_HEADER_BYTES + keyBytes[i]! + (records[i]!.value?.length ?? 0);
  const buf = Buffer.allocUnsafe(FRAME_PREFIX_BYTES + bytes);
  let pos = FRAME_PREFIX_BYTES;
  for (let i = 0; i < records.length; i++) {
    const { key, value } = records[i]!;
    const keyLength = keyBytes[i]!;
    buf.writeUInt32LE(i, pos);
    buf.writeUInt32LE(keyLength, pos + 4);
    buf.writeInt32LE(value === null ? -1 : value.length, pos + 8);
    pos += RECORD_HEADER_BYTES;
    pos += (buf as unknown as Utf8Writing).utf8Write(key, pos, keyLength);
    if (value !== null) {
      buf.set(value, pos);
      pos += value.length;
    }
  }
  return { buf, count: records.length, bytes };
}

/** The frame of a group of appends, its first record at `base`. */
export function groupFrame(group: readonly EncodedAppend[], base: bigint): Buffer {
  const frame = group.length === 1 ? group[0]!.buf : concatenated(group);
  frame.writeUInt32LE(FRAME_MAGIC, 0);
  frame.writeUInt32LE(frame.length - FRAME_HEADER_BYTES, 8);
  frame.writeBigUInt64LE(base, 12);
  frame.writeUInt32LE(
    group.reduce((sum, append) => sum + append.count, 0),
    20,
  );
  frame.writeUInt32LE(crc32(frame.subarray(8)), 4);
  return frame;
}

/** The appends' records in one buffer after the prefix, each append's deltas shifted by the records before it. */
function concatenated(group: readonly EncodedAppend[]): Buffer {
  const frame = Buffer.allocUnsafe(FRAME_PREFIX_BYTES + group.reduce((sum, append) => sum + append.bytes, 0));
  let pos = FRAME_PREFIX_BYTES;
  let before = 0;
  for (const { buf, count, bytes } of group) {
    buf.copy(frame, pos, FRAME_PREFIX_BYTES);
    if (before > 0) shiftDeltas(frame, pos, count, before);
    pos += bytes;
    before += count;
  }
  return frame;
}

function shiftDeltas(frame: Buffer, pos: number, count: number, by: number): void {
  for (let i = 0; i < count; i++) {
    frame.writeUInt32LE(frame.readUInt32LE(pos) + by, pos);
    pos += RECORD_HEADER_BYTES + frame.readUInt32LE(pos + 4) + Math.max(frame.readInt32LE(pos + 8), 0);
  }
}
