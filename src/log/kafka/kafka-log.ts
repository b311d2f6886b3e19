/**
 * The Kafka EventLog: one compacted topic, a partition of it per log partition.
 *
 *   append   two transactional producers per partition, used in turn and pipelined
 *            (transactionalIds runlog:<topic>:<p>:0 and :1), group-committed; resolves once
 *            committed (acks=-1) (transaction-pipeline.ts)
 *   read     a read_committed consumer from the offset to the end at the call (partition-reader.ts)
 *   tail     the same consumer, unbounded, until the signal aborts
 *   endOffset the LSO, once it is past this log's own committed appends -- see below
 *   compact  nothing: the broker's log cleaner compacts the topic on its own schedule
 *
 * Read-your-writes: the end of read() is the LSO once it has passed this log's own committed
 * appends, endOffset's once it has also passed their commit marker (read-your-writes.ts).
 *
 * Opening the log writes nothing and fences nobody: a partition's producer connects on its
 * first append, or on claim(partition), which a new owner calls to fence the previous writer
 * before it replays. Readers (CLI tail, replay tools) can therefore open a live log safely.
 * This module and its siblings are the only importers of kafkajs in runlog.
 */
import kafkajs from 'kafkajs';
import type { Admin, Kafka } from 'kafkajs';
import { describe, requireBoolean, requireInteger, requireObject } from '../../validation/index.ts';
import { RunlogError, invalidArgument } from '../../errors.ts';
import type { AppendOptions, AppendRecord, EventLog, LogRecord, ReadOptions, TailOptions } from '../event-log.ts';
import {
  checkAppendOptions,
  checkOffset,
  checkPartition,
  checkPartitionCount,
  checkReadOptions,
  checkRecords,
  checkTailOptions,
} from '../log-arguments.ts';
import { batchBytesFor, kafkaRecordLimits } from './batch-size.ts';
import { quietLogCreator, toRunlogError } from './errors.ts';
import { readPartition } from './partition-reader.ts';
import { PointReader } from './point-reader.ts';
import { ReadYourWrites } from './read-your-writes.ts';
import { KafkaSnapshotStore } from './snapshot-store.ts';
import { fetchTopicId } from './topic-id.ts';
import { TransactionPipeline, type TransactionStats } from './transaction-pipeline.ts';
import { checkTopic, ensureTopic, existingPartitionCount, type TopicFacts } from './topic.ts';

export interface KafkaLogOptions {
  brokers: string[];
  topic: string;
  /** Omitted: an existing topic's count, or DEFAULT_KAFKA_PARTITIONS for a new topic. */
  partitions?: number;
  clientId?: string;
  /** For a topic this call creates; default: the cluster's default.replication.factor. */
  replicationFactor?: number;
  /** Extra configs for a topic this call creates (cleanup.policy is always compact). */
  topicConfig?: Record<string, string>;
  /** How long a tail's fetch waits on the broker for new records (default 200 ms). */
  tailWaitMs?: number;
  /** A writer's transaction timeout: how long a crashed writer's open transaction holds back readers (default 60 s). */
  transactionTimeoutMs?: number;
  /**
   * Only read (audit and replay tools): the topic is never created (a missing one is
   * InvalidArgument), appends and claims are refused, so no writer is ever fenced.
   */
  readOnly?: boolean;
}

/** The Kafka EventLog, plus claim(): fence the partition's previous writer now. */
export interface KafkaEventLog extends EventLog {
  readonly topic: string;
  claim(partition: number): Promise<void>;
  /** What this log's writers committed so far, over every partition (the benchmarks' commands per transaction). */
  stats(): TransactionStats;
}

const READ_WAIT_MS = 100;

class KafkaLog implements KafkaEventLog {
  readonly kind = 'kafka';
  readonly partitions: number;
  /** Transactions are pipelined on two lanes, and batches coalesce behind them (transaction-pipeline.ts). */
  readonly appendsInFlight = 16;
  /** append's `consumed` commits in the append's transaction (TxnOffsetCommit: transactional-producer.ts). */
  readonly commitsConsumedOffsets = true;
  /** A record must fit one record batch of the topic's max.message.bytes; an append is split into as many as it needs (batch-size.ts). */
  readonly maxRecordBytes: number;
  readonly maxAppendBytes: number;
  readonly topic: string;
  /** Snapshots of the queue's views, in the compacted topic `<topic>.snapshots` (snapshot-store.ts); absent when the cluster keeps no topic ids. */
  readonly snapshots?: KafkaSnapshotStore;
  readonly #kafka: Kafka;
  readonly #admin: Admin;
  readonly #ends: ReadYourWrites;
  readonly #pipelines: TransactionPipeline[];
  readonly #newPipeline: (partition: number) => TransactionPipeline;
  readonly #tailWaitMs: number;
  readonly #readers = new Set<AbortController>();
  readonly #points: PointReader;
  readonly #maxMessageBytes: number;
  readonly #readOnly: boolean;
  readonly #stats: TransactionStats = { transactions: 0, appends: 0, records: 0 };
  #closing: Promise<void> | null = null;

  constructor(
    clients: { readers: Kafka; writers: Kafka },
    admin: Admin,
    options: KafkaLogOptions & { partitions: number },
    facts: TopicFacts & { topicId: string | null },
  ) {
    const limits = kafkaRecordLimits(facts.maxMessageBytes);
    this.maxRecordBytes = limits.maxRecordBytes;
    this.maxAppendBytes = limits.maxAppendBytes;
    this.#maxMessageBytes = facts.maxMessageBytes;
    this.#readOnly = options.readOnly ?? false;
    this.#kafka = clients.readers;
    this.#points = new PointReader(clients.readers, options.topic, Math.max(facts.maxMessageBytes, 1 << 20));
    this.#admin = admin;
    this.topic = options.topic;
    this.partitions = options.partitions;
    this.#tailWaitMs = options.tailWaitMs ?? 200;
    this.#ends = new ReadYourWrites(admin, options.topic, options.partitions, () => this.#refuseIfClosed());
    const transactionTimeoutMs = options.transactionTimeoutMs;
    const batchBytes = batchBytesFor(facts.maxMessageBytes);
    this.#newPipeline = (partition) =>
      new TransactionPipeline({
        kafka: clients.writers,
        topic: options.topic,
        partition,
        batchBytes,
        stats: this.#stats,
        ...(transactionTimeoutMs ? { transactionTimeoutMs } : {}),
      });
    this.#pipelines = Array.from({ length: options.partitions }, (_, partition) => this.#newPipeline(partition));
    if (facts.topicId !== null) {
      const { partitions, replicationFactor } = options;
      const store = { clients, admin, dataTopic: options.topic, topicId: facts.topicId, partitions, readOnly: this.#readOnly };
      this.snapshots = new KafkaSnapshotStore({ ...store, ...(replicationFactor ? { replicationFactor } : {}) });
    }
  }

  #open(partition: number): number {
    if (this.#closing) throw new RunlogError('Stopped', `the Kafka log of topic ${this.topic} is closed`);
    return checkPartition(partition, this.partitions);
  }

  /** A partition to write: refused on a read-only log. */
  #openToWrite(partition: number, what: string): number {
    const p = this.#open(partition);
    if (this.#readOnly) throw new RunlogError('InvalidArgument', `the Kafka log of topic ${this.topic} is open read-only: ${what} refused`);
    return p;
  }

  /** `options.consumed`: committed in the append's transaction (sendOffsets: transaction-pipeline.ts). */
  async append(partition: number, records: readonly AppendRecord[], options?: AppendOptions): Promise<bigint[]> {
    const p = this.#openToWrite(partition, 'append');
    const limit = `topic ${this.topic} (its max.message.bytes ${this.#maxMessageBytes} less a record batch's overhead)`;
    const checked = checkRecords(records, this, limit);
    const consumed = checkAppendOptions(options, true, `the Kafka log of topic ${this.topic}`);
    const offsets = await this.#pipelines[p]!.append(checked, consumed);
    this.#ends.committed(p, offsets);
    return offsets;
  }

  stats(): TransactionStats {
    return { ...this.#stats };
  }

  async claim(partition: number): Promise<void> {
    await this.#pipelines[this.#openToWrite(partition, 'claim')]!.claim();
  }

  /**
   * A cluster node hands the partition over: its pipeline closes (appends in flight settle,
   * its producers disconnect) and a fresh one, not yet connected, takes its place, so a later
   * claim() starts over even after this writer was fenced (a fenced pipeline never connects again).
   */
  async release(partition: number): Promise<void> {
    const p = this.#openToWrite(partition, 'release');
    const old = this.#pipelines[p]!;
    this.#pipelines[p] = this.#newPipeline(p);
    await old.close();
  }

  read(partition: number, fromOffset: bigint, options?: ReadOptions): AsyncIterable<LogRecord> {
    const p = this.#open(partition);
    const from = checkOffset(fromOffset);
    const maxRecords = checkReadOptions(options);
    // The end is taken at the call, not when iteration starts.
    const end = maxRecords === 0 ? Promise.resolve(0n) : this.#ends.stableEnd(p, false);
    end.catch(() => undefined);
    return this.#reading(p, from, end, maxRecords);
  }

  async *#reading(partition: number, from: bigint, end: Promise<bigint>, maxRecords: number): AsyncGenerator<LogRecord> {
    const endOffset = await end;
    if (from >= endOffset || maxRecords === 0) return;
    yield* this.#consume({ partition, from, end: endOffset, maxRecords, maxWaitMs: READ_WAIT_MS });
  }

  /** One record by offset: a Fetch to the partition's leader (point-reader.ts), not a consumer of its own group as read() starts. */
  async readAt(partition: number, offset: bigint): Promise<LogRecord | null> {
    const p = this.#open(partition);
    this.#refuseIfClosed();
    return this.#points.read(p, checkOffset(offset));
  }

  tail(partition: number, fromOffset: bigint, options: TailOptions): AsyncIterable<LogRecord> {
    const p = this.#open(partition);
    const from = checkOffset(fromOffset);
    const signal = checkTailOptions(options);
    return this.#consume({ partition: p, from, end: null, maxRecords: Number.POSITIVE_INFINITY, maxWaitMs: this.#tailWaitMs, signal });
  }

  /** Runs a reader whose consumer close() can stop too. */
  async *#consume(range: {
    partition: number;
    from: bigint;
    end: bigint | null;
    maxRecords: number;
    maxWaitMs: number;
    signal?: AbortSignal;
  }): AsyncGenerator<LogRecord> {
    if (range.signal?.aborted) return;
    this.#refuseIfClosed(); // a read whose end was still being asked for when close() came
    const stop = new AbortController();
    const signal = range.signal ? AbortSignal.any([range.signal, stop.signal]) : stop.signal;
    this.#readers.add(stop);
    try {
      const stableEnd = (): Promise<bigint> => this.#ends.stableOffset(range.partition);
      yield* readPartition(this.#kafka, { ...range, topic: this.topic, signal, stableEnd });
    } finally {
      this.#readers.delete(stop);
    }
  }

  async endOffset(partition: number): Promise<bigint> {
    return this.#ends.stableEnd(this.#open(partition), true);
  }

  /** The broker's log cleaner compacts the topic by itself (cleanup.policy=compact); nothing to do. */
  async compact(partition: number): Promise<void> {
    this.#open(partition);
  }

  close(): Promise<void> {
    this.#closing ??= this.#closeAll();
    return this.#closing;
  }

  /**
   * Nothing may connect after close: kafkajs reconnects a disconnected admin on its next
   * call, and a consumer started late would stay connected, keeping the process alive until
   * the broker drops the idle connection (10 minutes). So readers are stopped, new reads
   * and end-offset questions are refused, and the admin is disconnected only once the
   * questions already asked have been answered.
   */
  async #closeAll(): Promise<void> {
    for (const reader of this.#readers) reader.abort();
    await Promise.all(this.#pipelines.map((w) => w.close()));
    await this.snapshots?.close();
    await this.#points.close();
    await this.#ends.settled();
    await this.#admin.disconnect().catch(() => undefined);
  }

  #refuseIfClosed(): void {
    if (this.#closing) throw new RunlogError('Stopped', `the Kafka log of topic ${this.topic} is closed`);
  }
}

function checkOptions(options: KafkaLogOptions): void {
  if (
    !Array.isArray(options.brokers) ||
    options.brokers.length === 0 ||
    !options.brokers.every((b) => typeof b === 'string' && b.length > 0)
  ) {
    throw invalidArgument(`brokers must be a non-empty list of host:port strings, got ${describe(options.brokers)}`);
  }
  if (typeof options.topic !== 'string' || !/^[a-zA-Z0-9._-]{1,200}$/.test(options.topic)) {
    throw invalidArgument(`topic must be a legal Kafka topic name ([a-zA-Z0-9._-], 1-200 chars), got ${describe(options.topic)}`);
  }
  if (
    options.clientId !== undefined &&
    (typeof options.clientId !== 'string' || options.clientId.length === 0 || options.clientId.length > 255)
  ) {
    throw invalidArgument(`clientId must be a string of 1 to 255 characters, got ${describe(options.clientId)}`);
  }
  if (options.partitions !== undefined) checkPartitionCount(options.partitions, 'kafka');
  if (options.replicationFactor !== undefined) requireInteger('replicationFactor', options.replicationFactor, 1, 32_767);
  if (options.readOnly !== undefined) requireBoolean('readOnly', options.readOnly);
  // The broker's transaction.max.timeout.ms defaults to 15 minutes.
  if (options.transactionTimeoutMs !== undefined) requireInteger('transactionTimeoutMs', options.transactionTimeoutMs, 1_000, 900_000);
  if (options.tailWaitMs !== undefined) requireInteger('tailWaitMs', options.tailWaitMs, 1, 60_000);
  const config = options.topicConfig;
  if (config !== undefined && !Object.values(requireObject('topicConfig', config)).every((v) => typeof v === 'string')) {
    throw invalidArgument(`topicConfig must map Kafka topic config names to string values, got ${describe(config)}`);
  }
}

/**
 * Partitions of a topic created without a count asked for. Every partition is a transaction
 * stream of its own (its own transactional ids: the unit of ownership a claim fences), and
 * Kafka cannot put two transactional ids' records in one request or one commit. So the
 * commands in flight in one process are split into one transaction per partition: with one
 * partition, 64 callers' commands ride one transaction (64 records each); spread over 8, each
 * transaction carries about 4, and every transaction costs the broker the same fixed work
 * (AddPartitionsToTxn, Produce, EndTxn, the transaction log's three appends and the commit
 * marker's round trip). Measured interleaved on the 2-core bench VM (bench/kafka-partitions.ts):
 * 8 partitions ran 5 to 10 times fewer lifecycles/s than 1 at load 13 to 26 (5.9 times fewer
 * on a quiet machine the day before: 1,190 against 6,968), and the broker's transactions/s
 * hardly grew with the partitions. One process serves one partition best; a cluster that
 * shares the work between nodes asks for its count (README, How many partitions).
 */
export const DEFAULT_KAFKA_PARTITIONS = 1;

/** Opens (creating if missing, unless readOnly) the topic and returns the EventLog over it. */
export async function openKafkaLog(options: KafkaLogOptions): Promise<KafkaEventLog> {
  checkOptions(options);
  const kafka = kafkaClient(options, READER_RETRY);
  const admin = kafka.admin();
  let partitions: number;
  let facts: TopicFacts;
  let topicId: string | null;
  try {
    await admin.connect();
    const topicConfig = options.topicConfig ?? {};
    const { topic, replicationFactor } = options;
    const existing = options.partitions === undefined || options.readOnly ? await existingPartitionCount(admin, topic) : null;
    if (options.readOnly && existing === null) {
      throw new RunlogError(
        'InvalidArgument',
        `Kafka topic ${topic} does not exist on ${options.brokers.join(',')} (a read-only open creates nothing)`,
      );
    }
    partitions = options.partitions ?? existing ?? DEFAULT_KAFKA_PARTITIONS;
    const spec = { topic, partitions, topicConfig, ...(replicationFactor ? { replicationFactor } : {}) };
    facts = options.readOnly ? await checkTopic(admin, spec) : await ensureTopic(admin, spec);
    topicId = await fetchTopicId(options.brokers, topic, options.clientId ?? 'runlog');
  } catch (error) {
    await admin.disconnect().catch(() => undefined);
    throw toRunlogError(error, `opening Kafka topic ${options.topic} on ${options.brokers.join(',')}`);
  }
  return new KafkaLog(
    { readers: kafka, writers: kafkaClient(options, WRITER_RETRY) },
    admin,
    { ...options, partitions },
    { ...facts, topicId },
  );
}

/**
 * How long kafkajs itself keeps retrying (reconnecting, refreshing metadata) before a call
 * fails. Readers and the admin ride out a broker restart (about 25 s). Writers give up
 * sooner (about 3 s, plus connection timeouts): a batch waiting on a broker that is gone
 * holds up every command in it, and the RunQueue handles a failed append itself (it refuses
 * the commands, rebuilds the partition and serves again once the log answers).
 */
const READER_RETRY = { initialRetryTime: 100, retries: 8 };
const WRITER_RETRY = { initialRetryTime: 100, maxRetryTime: 1_000, retries: 5 };

function kafkaClient(options: KafkaLogOptions, retry: { initialRetryTime: number; retries: number; maxRetryTime?: number }): Kafka {
  return new kafkajs.Kafka({
    clientId: options.clientId ?? 'runlog',
    brokers: options.brokers,
    logLevel: kafkajs.logLevel.ERROR,
    logCreator: quietLogCreator,
    retry,
  });
}
