/**
 * How a snapshot is laid out in records of the `<topic>.snapshots` topic (snapshot-store.ts):
 * split into chunks, each a record of at most the chunk size the topic allows, keyed by its
 * slot and index (`a.0`, `a.1`, ... or `b.0`, ...), its value a 36-byte header and the
 * chunk's bytes:
 *
 *   magic 'RLSC' (4) | snapshot id (16 random bytes) | nextOffset (u64) | index (u32) | count (u32) | bytes
 *
 * A snapshot is whole when the scan finds `count` chunks of its id; its bytes are then the
 * chunks in index order (the snapshot's own checksum, src/events/snapshot-codec.ts, is the
 * judge of those bytes; Kafka's record CRC guards each record).
 */
import { randomBytes } from 'node:crypto';

export type Slot = 'a' | 'b';

const MAGIC = Buffer.from('RLSC', 'latin1');
export const CHUNK_HEADER_BYTES = 36;

export interface ChunkHeader {
  id: string;
  nextOffset: bigint;
  index: number;
  count: number;
}

/** The records (key, value) that hold `bytes` in `slot`, chunks of at most `chunkBytes` bytes of data each. */
export function toChunks(slot: Slot, bytes: Uint8Array, nextOffset: bigint, chunkBytes: number): { key: string; value: Buffer }[] {
  const id = randomBytes(16);
  const count = Math.max(1, Math.ceil(bytes.length / chunkBytes));
  return Array.from({ length: count }, (_, index) => {
    const data = bytes.subarray(index * chunkBytes, (index + 1) * chunkBytes);
    const value = Buffer.allocUnsafe(CHUNK_HEADER_BYTES + data.length);
    MAGIC.copy(value, 0);
    id.copy(value, 4);
    value.writeBigUInt64BE(nextOffset, 20);
    value.writeUInt32BE(index, 28);
    value.writeUInt32BE(count, 32);
    value.set(data, CHUNK_HEADER_BYTES);
    return { key: chunkKey(slot, index), value };
  });
}

export function chunkKey(slot: Slot, index: number): string {
  return `${slot}.${index}`;
}

/** The slot and index a record's key names, or null when it is no chunk's key. */
export function parseChunkKey(key: string): { slot: Slot; index: number } | null {
  const match = /^([ab])\.(\d{1,9})$/.exec(key);
  return match === null ? null : { slot: match[1] as Slot, index: Number(match[2]) };
}

/** A chunk's header, or null when the value is not a chunk (or is one whose header is impossible). */
export function parseChunk(value: Uint8Array): ChunkHeader | null {
  if (value.length < CHUNK_HEADER_BYTES) return null;
  const buffer = Buffer.from(value.buffer, value.byteOffset, value.length);
  if (!buffer.subarray(0, 4).equals(MAGIC)) return null;
  const header = {
    id: buffer.subarray(4, 20).toString('hex'),
    nextOffset: buffer.readBigUInt64BE(20),
    index: buffer.readUInt32BE(28),
    count: buffer.readUInt32BE(32),
  };
  return header.count >= 1 && header.index < header.count ? header : null;
}

export function chunkData(value: Uint8Array): Uint8Array {
  return value.subarray(CHUNK_HEADER_BYTES);
}
