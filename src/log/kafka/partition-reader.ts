/**
 * Reads one partition from an offset, read_committed, with a kafkajs consumer.
 *
 * kafkajs has no `assign`: every consumer is in a group. Each read gets its own group
 * (unique id, offsets never committed) and an assigner that hands that one member only the
 * partition asked for; after run(), seek() puts it at the offset (kafkajs fetches nothing
 * for a partition with a pending seek). eachBatch hands whole fetched batches over to the
 * async iterator through a one-slot handoff, so memory stays at about one fetch, and the
 * consumer heartbeats while a slow reader holds it up.
 *
 * Where a bounded read ends (`end`, the LSO at the call): read_committed fetches hide
 * aborted records and the transactions' control records (commit/abort markers), and
 * compaction removes records; both leave holes. So progress is tracked as the position
 * after the last offset of each fetched batch, counting hidden records too: a batch's
 * lastOffset() includes its control records, and a batch that is nothing but hidden
 * records is announced by END_BATCH_PROCESS without reaching eachBatch. If compaction
 * emptied everything between the position and `end`, fetches come back with nothing at
 * all. After IDLE_FETCHES_AT_END of those in a row the reader asks for the LSO: once it is
 * at or past `end`, everything below `end` is stable, so an empty fetch means nothing is
 * left and the read ends. (Below the LSO it may just be waiting for commit markers.)
 */
import { randomUUID } from 'node:crypto';
import kafkajs from 'kafkajs';
import type { Consumer, EachBatchPayload, Kafka, KafkaMessage, PartitionAssigner } from 'kafkajs';
import { isRunlogError, type RunlogError } from '../../errors.ts';
import type { LogRecord } from '../event-log.ts';
import { Backoff } from '../../retry.ts';
import { toRunlogError } from './errors.ts';
import { Handoff } from './handoff.ts';

const IDLE_FETCHES_AT_END = 3;
const SESSION_TRIES = 5;
const SESSION_FIRST_PAUSE_MS = 250;
const SESSION_MAX_PAUSE_MS = 1_000;
const HEARTBEAT_EVERY_MS = 2_000;

export interface PartitionRange {
  topic: string;
  partition: number;
  from: bigint;
  /** Stop before this offset; null follows the partition (a tail) until the signal aborts. */
  end: bigint | null;
  maxRecords: number;
  signal?: AbortSignal;
  /** How long a fetch waits on the broker for new records (tail latency vs. idle requests). */
  maxWaitMs: number;
  /** The partition's LSO now. */
  stableEnd: () => Promise<bigint>;
}

/** An assigner that gives the (single) member of a reader's own group just `partition`. */
function onePartitionAssigner(topic: string, partition: number): PartitionAssigner {
  const { AssignerProtocol } = kafkajs;
  const name = 'RunlogOnePartition';
  return () => ({
    name,
    version: 1,
    async assign({ members }) {
      return members.map((member, i) => ({
        memberId: member.memberId,
        memberAssignment: AssignerProtocol.MemberAssignment.encode({
          version: 1,
          assignment: i === 0 ? { [topic]: [partition] } : {},
          userData: Buffer.alloc(0),
        }),
      }));
    },
    protocol({ topics }) {
      return { name, metadata: AssignerProtocol.MemberMetadata.encode({ version: 1, topics, userData: Buffer.alloc(0) }) };
    },
  });
}

function toLogRecord(message: KafkaMessage): LogRecord {
  const value = message.value === null ? null : new Uint8Array(message.value); // a copy: not a view of the whole fetch
  return { offset: BigInt(message.offset), key: message.key?.toString('utf8') ?? '', value };
}

/**
 * The records of one read, from a consumer started for it and stopped when it ends. A
 * session that fails retriably (a broker just started: "the coordinator is loading", a
 * consumer crash before its group formed) is replaced by a fresh one from the next offset
 * not yet yielded, a few times, backing off (src/retry.ts), before the read fails with the
 * error. An abort ends the read quietly, also during a pause.
 */
export async function* readPartition(kafka: Kafka, range: PartitionRange): AsyncGenerator<LogRecord> {
  const { signal } = range;
  if (signal?.aborted || range.maxRecords <= 0 || (range.end !== null && range.from >= range.end)) return;
  const retriable = (error: unknown): boolean => isRunlogError(error) && error.retriable;
  const backoff = new Backoff({ firstMs: SESSION_FIRST_PAUSE_MS, maxMs: SESSION_MAX_PAUSE_MS, tries: SESSION_TRIES, retriable, signal });
  let from = range.from;
  let remaining = range.maxRecords;
  for (;;) {
    try {
      for await (const record of sessionRecords(kafka, { ...range, from })) {
        yield record;
        from = record.offset + 1n;
        if (--remaining <= 0 || signal?.aborted) return;
      }
      return;
    } catch (error) {
      if (signal?.aborted) throw error;
      await backoff.after(error).catch((stop: unknown) => {
        if (!signal?.aborted) throw stop;
      });
      if (signal?.aborted) return;
    }
  }
}

/** The records one session reads; its consumer is stopped however the reading ends. */
async function* sessionRecords(kafka: Kafka, range: PartitionRange): AsyncGenerator<LogRecord> {
  const session = new ReadSession(kafka, range);
  try {
    await session.start();
    for (let chunk = await session.next(); chunk !== null; chunk = await session.next()) yield* chunk;
  } finally {
    await session.stop();
  }
}

class ReadSession {
  readonly #range: PartitionRange;
  readonly #consumer: Consumer;
  readonly #handoff = new Handoff<LogRecord[]>();
  /** The next offset to read: past every offset fetched so far, hidden ones included. */
  #position: bigint;
  #idleFetches = 0;
  readonly #onAbort = (): void => this.#handoff.close();

  constructor(kafka: Kafka, range: PartitionRange) {
    this.#range = range;
    this.#position = range.from;
    this.#consumer = kafka.consumer({
      groupId: `runlog-reader-${range.topic}-${range.partition}-${randomUUID()}`,
      partitionAssigners: [onePartitionAssigner(range.topic, range.partition)],
      readUncommitted: false,
      allowAutoTopicCreation: false,
      maxWaitTimeInMs: range.maxWaitMs,
      maxBytes: 32 * 1024 * 1024,
      maxBytesPerPartition: 16 * 1024 * 1024,
      // A crashed consumer stays down: the read fails (CRASH below) and its caller retries a
      // fresh session. kafkajs's own restart would outlive this session's disconnect when
      // the crash races it (a broker going away), restarting forever in the background.
      retry: { restartOnFailure: async () => false },
    });
  }

  async start(): Promise<void> {
    const { topic, partition, from, signal } = this.#range;
    signal?.addEventListener('abort', this.#onAbort, { once: true });
    this.#listen();
    try {
      await this.#consumer.connect();
      await this.#consumer.subscribe({ topics: [topic], fromBeginning: true });
      await this.#consumer.run({ autoCommit: false, eachBatchAutoResolve: true, eachBatch: (payload) => this.#onBatch(payload) });
      this.#consumer.seek({ topic, partition, offset: from.toString() });
    } catch (error) {
      throw toRunlogError(error, `reading partition ${partition} of ${topic}`);
    }
  }

  next(): Promise<LogRecord[] | null> {
    return this.#handoff.take();
  }

  async stop(): Promise<void> {
    this.#range.signal?.removeEventListener('abort', this.#onAbort);
    this.#handoff.close();
    await this.#consumer.disconnect().catch(() => undefined);
  }

  #listen(): void {
    const { events } = this.#consumer;
    this.#consumer.on(events.END_BATCH_PROCESS, ({ payload }) => {
      if (payload.partition === this.#range.partition) this.#advance(BigInt(payload.lastOffset) + 1n);
    });
    this.#consumer.on(events.FETCH, () => {
      if (this.#range.end !== null && ++this.#idleFetches === IDLE_FETCHES_AT_END) void this.#endIfStable(this.#range.end);
    });
    this.#consumer.on(events.CRASH, ({ payload }) => {
      if (!payload.restart) this.#handoff.close(this.#failure(payload.error));
    });
  }

  #failure(error: unknown): RunlogError {
    return toRunlogError(error, `reading partition ${this.#range.partition} of ${this.#range.topic}`);
  }

  /** Ends an idle bounded read once everything below its end is stable (see the top). */
  async #endIfStable(end: bigint): Promise<void> {
    try {
      const stable = await this.#range.stableEnd();
      if (stable >= end && this.#idleFetches >= IDLE_FETCHES_AT_END) this.#handoff.close();
      else this.#idleFetches = 0;
    } catch (error) {
      this.#handoff.close(this.#failure(error));
    }
  }

  /** Moves the position forward; a bounded read is done once it reaches the end. */
  #advance(next: bigint): void {
    this.#idleFetches = 0;
    if (next > this.#position) this.#position = next;
    if (this.#range.end !== null && this.#position >= this.#range.end) this.#handoff.close();
  }

  async #onBatch({ batch, heartbeat }: EachBatchPayload): Promise<void> {
    if (batch.partition !== this.#range.partition) return;
    const { end } = this.#range;
    const start = this.#position;
    const records = batch.messages
      .filter((m) => {
        const offset = BigInt(m.offset);
        return offset >= start && (end === null || offset < end);
      })
      .map(toLogRecord);
    this.#idleFetches = 0;
    if (records.length > 0) await this.#handoff.put(records, heartbeat, HEARTBEAT_EVERY_MS);
    this.#advance(BigInt(batch.lastOffset()) + 1n);
  }
}
