/**
 * Where a log keeps snapshots of its partitions' views (src/projector/snapshots.ts reads
 * and judges them; src/queue/snapshot-keeper.ts takes them): beside the file log
 * (file/snapshot-store.ts), in a compacted topic beside a Kafka topic (kafka/snapshot-store.ts).
 * A store holds bytes; it never decides whether a snapshot is to be trusted, but says what the
 * reader needs to decide: the log's identity, and which snapshots a compaction may have made
 * stale.
 */
import type { SnapshotSource } from '../events/snapshot-stream.ts';

export interface StoredSnapshot {
  /** Where it is, for warnings (a file's path, a topic's record). */
  readonly name: string;
  read(): Promise<Uint8Array>;
  /**
   * Its bytes to read by position, where the store can give them so (a file: never read
   * whole, see src/events/snapshot-stream.ts); close it after. Absent: `read` them whole.
   */
  open?(): Promise<OpenSnapshot>;
  /**
   * The anchor of the last record it covers (record-anchor.ts), where the store
   * keeps one: the reader checks it against the log before trusting the snapshot. Absent: a
   * store that keeps none (Kafka's: a topic id names one topic's records), or a snapshot saved
   * before stores kept them.
   */
  readonly anchor?: string;
}

export interface OpenSnapshot extends SnapshotSource {
  close(): Promise<void>;
}

export interface SnapshotStore {
  /** What a snapshot of this log must name as its log ('file:<logId>', 'kafka:<topic>:<topic id>'). */
  readonly logId: string;
  /**
   * Keeps `bytes` as `partition`'s newest snapshot, durably, in place of older ones (the previous
   * one may stay as a fallback), with `anchor` (the last covered record's: null for a snapshot
   * of no record) where the store keeps anchors.
   */
  save(partition: number, bytes: Uint8Array, nextOffset: bigint, anchor?: string | null): Promise<void>;
  /** Whether it keeps each snapshot's anchor (save's `anchor`): only then is one computed for it. */
  readonly keepsAnchors?: boolean;
  /** `partition`'s snapshots, newest first, to be read in turn until one is valid. */
  list(partition: number): Promise<StoredSnapshot[]>;
  /**
   * Why a snapshot of `partition` covering its records below `nextOffset`, taken at `takenAt`
   * (wall clock, epoch ms), may lack something compaction dropped since (tombstones, which
   * pruned entries and answers): a reason, or null when it is not stale.
   */
  staleness(partition: number): Promise<(nextOffset: bigint, takenAt: number) => string | null>;
  /**
   * Removes `partition`'s stored snapshot `name` (a StoredSnapshot's name), found to cover
   * offsets past the log's end: left in place, it would be trusted once the log grew past it
   * again, with other records. Absent where a store cannot (a read-only log's; Kafka's, whose
   * end does not move back while its topic id stays).
   */
  discard?(partition: number, name: string): Promise<void>;
}
