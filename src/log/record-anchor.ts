/**
 * A record's anchor: a digest of the record at an offset of a partition (its key and value), kept
 * with a snapshot as the last record it covers (the file log keeps it in the snapshot's file
 * name: src/log/file/snapshot-store.ts). A snapshot names its log by the log's id, which a copy
 * of the log directory keeps: a snapshot of a copy that went on differently names this log too,
 * at offsets this log has, over other records. The anchor tells: the record at the offset it
 * covers up to is not the one it was taken after (src/projector/snapshots.ts).
 */
import { createHash } from 'node:crypto';
import type { EventLog } from './event-log.ts';

/** 16 hex digits: the first 64 bits of a SHA-256. */
export const ANCHOR_PATTERN = /^[0-9a-f]{16}$/;

/** The anchor of the record at `offset` of `partition`, or null if the log holds none there (compacted away, or past its end). */
export async function recordAnchor(log: EventLog, partition: number, offset: bigint): Promise<string | null> {
  // One request where read() would start more (Kafka: a consumer).
  if (log.readAt !== undefined) {
    const record = await log.readAt(partition, offset);
    return record === null ? null : anchorOf(record.key, record.value);
  }
  for await (const record of log.read(partition, offset, { maxRecords: 1 })) {
    return record.offset === offset ? anchorOf(record.key, record.value) : null;
  }
  return null;
}

/** The anchor of a record of key `key` and value `value` (null: a tombstone). */
export function anchorOf(key: string, value: Uint8Array | null): string {
  const hash = createHash('sha256').update(key, 'utf8');
  // A tombstone and a record whose value is empty differ: a byte says which.
  hash.update(value === null ? Buffer.of(0) : Buffer.of(1));
  if (value !== null) hash.update(value);
  return hash.digest('hex').slice(0, 16);
}
