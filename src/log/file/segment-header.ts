/**
 * The header every segment file starts with: which log, which partition of how many, and
 * the base offset. With it a segment cannot be mistaken for another (renamed, copied from
 * another log or partition), and every partition directory carries its own copy of the
 * log's description (log.json can be restored from them; see log-meta.ts).
 *
 *   header := magic u32 | crc u32 | version u32 | partition u32 | partitions u32 |
 *             reserved u32 (0) | base u64 | logId [16]      (48 bytes, little-endian)
 *             crc = CRC32 over bytes 8..48
 */
import { crc32 } from 'node:zlib';
import { RunlogError } from '../../errors.ts';

export const SEGMENT_MAGIC = 0x52_4c_53_47; // 'GSLR' on disk: a runlog segment
export const SEGMENT_VERSION = 2;
export const SEGMENT_HEADER_BYTES = 48;

/** What a segment belongs to: a log (by its random id), one of its partitions, and the partition count. */
export interface SegmentIdentity {
  logId: string;
  partition: number;
  partitions: number;
}

export interface SegmentHeader extends SegmentIdentity {
  base: bigint;
}

export function encodeSegmentHeader({ logId, partition, partitions, base }: SegmentHeader): Buffer {
  const buf = Buffer.alloc(SEGMENT_HEADER_BYTES);
  buf.writeUInt32LE(SEGMENT_MAGIC, 0);
  buf.writeUInt32LE(SEGMENT_VERSION, 8);
  buf.writeUInt32LE(partition, 12);
  buf.writeUInt32LE(partitions, 16);
  buf.writeBigUInt64LE(base, 24);
  buf.write(logId, 32, 16, 'hex');
  buf.writeUInt32LE(crc32(buf.subarray(8)), 4);
  return buf;
}

/** Decodes a header read from `path`; Corrupt naming the file if it is not one. */
export function decodeSegmentHeader(buf: Buffer, path: string): SegmentHeader {
  const corrupt = (reason: string): RunlogError => new RunlogError('Corrupt', `${path}: ${reason}`);
  if (buf.length < SEGMENT_HEADER_BYTES) throw corrupt(`no whole segment header (${buf.length} of ${SEGMENT_HEADER_BYTES} bytes)`);
  if (buf.readUInt32LE(0) !== SEGMENT_MAGIC)
    throw corrupt('not a runlog segment of this format (bad header magic; a log written before format 2?)');
  if (crc32(buf.subarray(8, SEGMENT_HEADER_BYTES)) !== buf.readUInt32LE(4)) throw corrupt('segment header CRC mismatch');
  const version = buf.readUInt32LE(8);
  if (version !== SEGMENT_VERSION)
    throw corrupt(`segment format version ${version} is not supported (this runlog reads ${SEGMENT_VERSION})`);
  return {
    partition: buf.readUInt32LE(12),
    partitions: buf.readUInt32LE(16),
    base: buf.readBigUInt64LE(24),
    logId: buf.toString('hex', 32, 48),
  };
}

/** Corrupt unless `header` says what the file's name and place say it is. */
export function checkSegmentHeader(header: SegmentHeader, expected: SegmentHeader, path: string): void {
  const mismatch = (what: string): RunlogError => new RunlogError('Corrupt', `${path}: ${what}`);
  if (header.base !== expected.base) throw mismatch(`its header says base offset ${header.base}, its name ${expected.base} (renamed?)`);
  if (header.logId !== expected.logId) throw mismatch(`belongs to another log (log id ${header.logId}; this log is ${expected.logId})`);
  if (header.partition !== expected.partition) throw mismatch(`belongs to partition ${header.partition}, not ${expected.partition}`);
  if (header.partitions !== expected.partitions) {
    throw mismatch(`says the log has ${header.partitions} partitions; log.json says ${expected.partitions}`);
  }
}
