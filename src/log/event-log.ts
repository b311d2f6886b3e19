/**
 * The append-only log runlog keeps all its state in. Backends: memory/ (the reference),
 * file/ (the embedded default), kafka/. All pass test/contract/event-log.contract.ts.
 *
 * A log has a fixed number of partitions, each an ordered sequence of keyed records at
 * increasing offsets (bigint, never reused, with gaps allowed: Kafka's transaction markers
 * and compaction leave holes). A record whose value is null is a tombstone: compaction
 * keeps only the latest record per key and eventually drops tombstones.
 */
import type { SnapshotStore } from './snapshot-store.ts';

export interface AppendRecord {
  /** Names what the record is about; compaction keeps the latest record per key. */
  key: string;
  /** Encoded event bytes, or null for a tombstone. */
  value: Uint8Array | null;
}

export interface LogRecord extends AppendRecord {
  offset: bigint;
}

/**
 * Offsets consumed from another topic, committed in the same transaction as an append
 * (Kafka's exactly-once consume-transform-produce: src/cluster/command-intake.ts commits its
 * commands-topic offsets with the commands' events). `offset` is the NEXT offset to consume
 * (Kafka's committed-offset convention: the consumed record's offset + 1).
 */
export interface ConsumedOffset {
  /** The consumer group whose committed offset this is. */
  group: string;
  topic: string;
  partition: number;
  offset: bigint;
}

export interface AppendOptions {
  /** Commit this consumed offset atomically with the records. Only the Kafka log can: the others refuse it (InvalidArgument). */
  consumed?: ConsumedOffset;
}

/** A ConsumedOffset's identity: which offset of which group it moves. */
export function consumedKey(consumed: ConsumedOffset): string {
  return `${consumed.group}\u0000${consumed.topic}\u0000${consumed.partition}`;
}

export interface ReadOptions {
  /** Stop after this many records (default: no limit). */
  maxRecords?: number;
}

export interface TailOptions {
  /** Stops the tail; the iterator then ends without error. */
  signal: AbortSignal;
}

/**
 * What `read` returns may also offer its records a batch at a time (the file log reads a
 * frame at a time): one await per batch rather than per record, which costs more than
 * folding a small record. `batchesOf` uses that when offered, else batches of one; its
 * caller must treat values as BatchedRecords.batches says.
 */
export interface BatchedRecords extends AsyncIterable<LogRecord> {
  /**
   * The records, a batch at a time. Their values may be views of the log's read buffers,
   * valid only until the next batch is asked for: decode (or copy) them at once.
   */
  batches(): AsyncIterable<readonly LogRecord[]>;
  /**
   * The records handed to `visitor` where they lie in the log's read buffers, no record object
   * made (the file log: a replay decodes each value at once). Resolves with how many were visited.
   */
  visit?(visitor: RecordVisitor): Promise<number>;
}

/**
 * A record as it lies in a read buffer, valid only during the call: its offset (a safe
 * integer), its key's UTF-8 bytes [keyStart, valueStart) and its value's [valueStart, valueEnd),
 * or valueEnd -1 for a tombstone.
 */
export type RecordVisitor = (offset: number, buf: Buffer, keyStart: number, valueStart: number, valueEnd: number) => void;

export function batchesOf(records: AsyncIterable<LogRecord>): AsyncIterable<readonly LogRecord[]> {
  if (typeof (records as Partial<BatchedRecords>).batches === 'function') return (records as BatchedRecords).batches();
  return (async function* () {
    for await (const record of records) yield [record];
  })();
}

/**
 * How big records and appends may be. Every backend states the largest record its own
 * reader (or broker) accepts, and append refuses anything bigger with InvalidArgument
 * before writing anything, so nothing acknowledged can later be refused by the reader.
 * Sizes are counted backend-independently (recordBytes, appendBytes); each backend
 * derives its limits from its own format's limit minus its overheads.
 */
export interface RecordLimits {
  /** The largest record: recordBytes (UTF-8 key bytes + value bytes). */
  readonly maxRecordBytes: number;
  /**
   * The largest append (one atomic batch): appendBytes of its records. A backend that
   * splits a large append into several physical batches, still atomically (Kafka: one
   * transaction), says Number.POSITIVE_INFINITY.
   */
  readonly maxAppendBytes: number;
}

/** What appendBytes counts per record beyond its key and value: at least any backend's own per-record overhead. */
export const RECORD_OVERHEAD_BYTES = 64;

/** A record's size as limits count it: its key's UTF-8 bytes plus its value's bytes. */
export function recordBytes(record: AppendRecord): number {
  return Buffer.byteLength(record.key) + (record.value === null ? 0 : record.value.byteLength);
}

/** An append's size as limits count it: each record's bytes plus RECORD_OVERHEAD_BYTES. */
export function appendBytes(records: readonly AppendRecord[]): number {
  return records.reduce((sum, record) => sum + recordBytes(record) + RECORD_OVERHEAD_BYTES, 0);
}

/**
 * The key of an EventLog's optional append of records runlog built itself: the queue's group
 * commit (src/queue/group-commit.ts) appends its groups through it where a backend offers it.
 * Those records are plain { key, value } objects the queue made (recordsOf: keys from validated
 * names, values encoded events) and checked against the log's limits when they were made
 * (record-bounds.ts: each record within maxRecordBytes; the group commit keeps a group within
 * maxAppendBytes). `append` reads every record into a checked copy first, for callers it cannot
 * trust: ~0.2 µs and a few allocations a record, paid again for every record the queue writes.
 * Otherwise it is `append`: same atomicity, order and answers. A symbol, so no caller reaches it
 * by accident, and a wrapped log (tests' faults) that does not pass it on is appended to as before.
 */
export const APPEND_BUILT: unique symbol = Symbol('runlog.appendBuilt');

export interface EventLog extends RecordLimits {
  /** Which backend this is: 'memory' | 'file' | 'kafka'. */
  readonly kind: string;
  readonly partitions: number;

  /**
   * How many appends to one partition a writer should keep in flight at once to get the
   * log's throughput (default 1). The file log fsyncs one group at a time; Kafka pipelines
   * transactions (kafka/transaction-pipeline.ts).
   */
  readonly appendsInFlight?: number;

  /** Whether append takes `consumed` (AppendOptions): Kafka's log does; the others leave it out (false). */
  readonly commitsConsumedOffsets?: boolean;

  /**
   * Appends `records` to `partition` as one atomic batch: after a crash either all of
   * them are there or none. Resolves once the batch is durable (fsync'd; committed),
   * with the offsets assigned to the records, in order. A record over maxRecordBytes, or
   * a batch over maxAppendBytes, is refused with InvalidArgument and nothing is written.
   *
   * Appends to one partition land in call order and resolve in call order. When one
   * fails, every append to that partition called before the failure was reported fails
   * too, and none of them ever becomes visible: what a partition holds is always a prefix
   * of the appends made to it, so a writer may keep several in flight.
   *
   * `options.consumed` commits a consumed offset in the same atomic batch (Kafka only; the
   * other backends refuse it with InvalidArgument, writing nothing).
   */
  append(partition: number, records: readonly AppendRecord[], options?: AppendOptions): Promise<bigint[]>;

  /** `append` of records runlog built and checked itself, without the argument checks (APPEND_BUILT). Optional. */
  [APPEND_BUILT]?(partition: number, records: readonly AppendRecord[]): Promise<bigint[]>;

  /** The records of `partition` from `fromOffset` up to the end offset at the time of the call. */
  read(partition: number, fromOffset: bigint, options?: ReadOptions): AsyncIterable<LogRecord>;

  /** Like read, then follows new records as they are appended, until the signal aborts. */
  tail(partition: number, fromOffset: bigint, options: TailOptions): AsyncIterable<LogRecord>;

  /** The offset the next appended record will get at the earliest (Kafka's high watermark / LSO). */
  endOffset(partition: number): Promise<bigint>;

  /**
   * Compacts `partition`: keeps the latest record per key, drops tombstones older than
   * the backend's tombstone retention. Offsets of kept records do not change. On Kafka
   * the broker's cleaner does this; there the call only asks nothing and resolves.
   */
  compact(partition: number): Promise<void>;

  /**
   * Makes this process the partition's single writer now, fencing any previous one
   * (Kafka: initialises the partition's transactional producer). Backends whose open
   * already excludes other writers (the file log's lock) leave it out. A RunQueue
   * claims every partition before it replays, so no stale writer appends behind it.
   */
  claim?(partition: number): Promise<void>;

  /**
   * Lets go of the partition's writer (a cluster node handing the partition over): appends in
   * flight settle first; the next claim() starts a fresh writer, fencing whoever wrote since.
   * Backends without claim() leave it out.
   */
  release?(partition: number): Promise<void>;

  /**
   * The record at `offset` of `partition` (an offset the log answered as appended), or null when
   * none lies there. Backends where read() costs far more than one record's fetch offer it (Kafka:
   * a read starts a consumer; this is one request): the read-back of a closed entry uses it.
   */
  readAt?(partition: number, offset: bigint): Promise<LogRecord | null>;

  /** Where snapshots of the partitions' views are kept (snapshot-store.ts); absent: none are (memory, read-only Kafka). A read-only file log's are read, never saved. */
  readonly snapshots?: SnapshotStore;

  /** Releases files, locks and connections. Idempotent. */
  close(): Promise<void>;
}

/** Which backend a RunQueue opens, with its options. */
export type LogConfig =
  | { kind: 'memory' }
  | { kind: 'file'; dir: string; fsync?: boolean }
  | {
      kind: 'kafka';
      brokers: string[];
      topic: string;
      clientId?: string;
      /** For a topic this call creates; default: the cluster's default.replication.factor. */
      replicationFactor?: number;
      /** Extra configs for a topic this call creates (cleanup.policy is always compact). */
      topicConfig?: Record<string, string>;
      /** How long a crashed writer's open transaction holds back readers (default 60 s). */
      transactionTimeoutMs?: number;
      /** How long a tail's fetch waits on the broker for new records (default 200 ms). */
      tailWaitMs?: number;
    };
