/**
 * The writer of one partition: a transactional, idempotent kafkajs producer with
 * transactionalId `runlog-<topic>-<partition>`, and a group commit in front of it.
 *
 * Group commit. Appends queue up; one loop drains the queue, taking every queued append
 * (up to a size bound) into ONE transaction with ONE produce request (so one record batch
 * with consecutive offsets), commits, then resolves each append with its slice of the
 * offsets (base offset of the batch from the produce response, + i). Never two transactions
 * at once on the producer (kafkajs does not support it; maxInFlightRequests is 1).
 *
 * Durable, not yet visible. EndTxn returns once the coordinator has logged the commit
 * decision (replicated, acks=all): from then on the transaction will complete even if
 * everything crashes, so the append is durable and answered. The commit markers reach the
 * partition a moment later; only then do read_committed readers see the records (the LSO
 * moves past them). kafka-log.ts covers that gap for its own reads (see there). The next
 * transaction may meanwhile get CONCURRENT_TRANSACTIONS from the coordinator; kafkajs
 * retries it, soon (retry.initialRetryTime below). Waiting for the LSO instead, before
 * answering, halved the throughput in bench/kafka-raw.ts.
 *
 * Fencing. Connecting the producer sends InitProducerId for the transactionalId: the
 * coordinator bumps the epoch, aborts that id's open transaction and from then on refuses
 * the older epoch (INVALID_PRODUCER_EPOCH / PRODUCER_FENCED). So the latest writer to
 * connect owns the partition; a stale writer's next AddPartitionsToTxn, Produce or EndTxn
 * fails, nothing of that transaction ever becomes visible to read_committed readers, and
 * this writer turns into a permanent `Fenced` state: it never reconnects, because a new
 * InitProducerId would fence the rightful owner in turn.
 *
 * Other failures (broker unreachable, timeouts) reject the batch with LogUnavailable and
 * drop the producer; the next append connects a fresh one, whose InitProducerId aborts
 * whatever the failed transaction left open. If the failure hit the commit itself, its
 * outcome is unknown (the coordinator may have logged the commit): a caller that keeps
 * state beside the log must re-read the log after a LogUnavailable append.
 */
import kafkajs from 'kafkajs';
import type { Kafka, Message, Producer } from 'kafkajs';
import { RunlogError } from '../../errors.ts';
import type { AppendRecord } from '../event-log.ts';
import { isFencingError, toRunlogError } from './errors.ts';

/** Stay well below the broker's default message.max.bytes (1 MiB) when coalescing appends. */
const MAX_BATCH_BYTES = 512 * 1024;
const MAX_BATCH_RECORDS = 5000;
const RECORD_OVERHEAD_BYTES = 24;

interface Pending {
  records: readonly AppendRecord[];
  resolve: (offsets: bigint[]) => void;
  reject: (error: unknown) => void;
}

export interface PartitionWriterOptions {
  kafka: Kafka;
  topic: string;
  partition: number;
  transactionTimeoutMs?: number;
}

export class PartitionWriter {
  readonly #options: PartitionWriterOptions;
  readonly #transactionalId: string;
  #queue: Pending[] = [];
  #draining = false;
  #producer: Promise<Producer> | null = null;
  #stopped: RunlogError | null = null;

  constructor(options: PartitionWriterOptions) {
    this.#options = options;
    this.#transactionalId = `runlog-${options.topic}-${options.partition}`;
  }

  append(records: readonly AppendRecord[]): Promise<bigint[]> {
    if (this.#stopped) return Promise.reject(this.#stopped);
    if (records.length === 0) return Promise.resolve([]);
    return new Promise((resolve, reject) => {
      // Copied now: the caller may reuse its buffers before this append's turn comes.
      this.#queue.push({ records: records.map(copyRecord), resolve, reject });
      void this.#drain();
    });
  }

  /** Connects the producer now (InitProducerId), fencing any earlier writer of the partition. */
  async claim(): Promise<void> {
    if (this.#stopped) throw this.#stopped;
    await this.#connected();
  }

  async close(): Promise<void> {
    this.#stopped ??= new RunlogError('Stopped', `the Kafka log is closed (partition ${this.#options.partition})`);
    this.#failQueued(this.#stopped);
    await this.#dropProducer();
  }

  async #drain(): Promise<void> {
    if (this.#draining) return;
    this.#draining = true;
    try {
      while (this.#queue.length > 0 && !this.#stopped) await this.#commitBatch(this.#takeBatch());
    } finally {
      this.#draining = false;
    }
  }

  /** Takes queued appends, oldest first, until the size bound (always at least one). */
  #takeBatch(): Pending[] {
    let bytes = 0;
    let count = 0;
    let taken = 0;
    for (const pending of this.#queue) {
      const size = pending.records.reduce((sum, r) => sum + r.key.length * 3 + (r.value?.length ?? 0) + RECORD_OVERHEAD_BYTES, 0);
      if (taken > 0 && (bytes + size > MAX_BATCH_BYTES || count + pending.records.length > MAX_BATCH_RECORDS)) break;
      bytes += size;
      count += pending.records.length;
      taken++;
    }
    return this.#queue.splice(0, taken);
  }

  async #commitBatch(batch: Pending[]): Promise<void> {
    try {
      const records = batch.flatMap((p) => p.records);
      let next = await this.#transaction(records);
      for (const pending of batch) pending.resolve(pending.records.map(() => next++));
    } catch (error) {
      const failure = await this.#failed(error);
      for (const pending of batch) pending.reject(failure);
    }
  }

  /** One transaction holding one produce request; resolves the base offset of the batch. */
  async #transaction(records: readonly AppendRecord[]): Promise<bigint> {
    const producer = await this.#connected();
    const transaction = await producer.transaction();
    try {
      const [metadata] = await transaction.send({ topic: this.#options.topic, acks: -1, messages: records.map((r) => this.#message(r)) });
      if (metadata?.baseOffset === undefined) throw new RunlogError('LogUnavailable', 'the produce response carries no base offset');
      await transaction.commit();
      return BigInt(metadata.baseOffset);
    } catch (error) {
      if (isFencingError(error) || !transaction.isActive()) throw error;
      // A failure that does not say why (a broker error racing a new writer's InitProducerId,
      // a broken connection): the abort tells. Refused as fenced, this writer is fenced and
      // must never reconnect. Otherwise the abort is best effort: the next InitProducerId
      // (ours after a failure, or the new owner's) aborts the transaction anyway.
      try {
        await transaction.abort();
      } catch (abortError) {
        if (isFencingError(abortError)) throw abortError;
      }
      throw error;
    }
  }

  #message(record: AppendRecord): Message {
    const value = record.value === null ? null : Buffer.from(record.value.buffer, record.value.byteOffset, record.value.byteLength);
    return { partition: this.#options.partition, key: record.key, value }; // a view of the copy made by append
  }

  async #failed(error: unknown): Promise<RunlogError> {
    const failure = toRunlogError(error, `append to partition ${this.#options.partition} of ${this.#options.topic}`);
    if (failure.code === 'Fenced') {
      this.#stopped = failure;
      this.#failQueued(failure);
    }
    await this.#dropProducer();
    return failure;
  }

  #failQueued(error: RunlogError): void {
    for (const pending of this.#queue.splice(0)) pending.reject(error);
  }

  #connected(): Promise<Producer> {
    this.#producer ??= this.#connect();
    return this.#producer;
  }

  async #connect(): Promise<Producer> {
    const { kafka, transactionTimeoutMs } = this.#options;
    const producer = kafka.producer({
      transactionalId: this.#transactionalId,
      idempotent: true,
      maxInFlightRequests: 1,
      allowAutoTopicCreation: false,
      transactionTimeout: transactionTimeoutMs ?? 60_000,
      createPartitioner: kafkajs.Partitioners.DefaultPartitioner, // unused: every message names its partition
      // CONCURRENT_TRANSACTIONS right after a commit clears within milliseconds: retry soon.
      retry: { initialRetryTime: 2, maxRetryTime: 2_000, retries: 20 },
    });
    try {
      await producer.connect();
      // kafkajs sends the transactional InitProducerId (which fences the previous holder of
      // the transactionalId) only when the first transaction begins, not on connect: begin
      // and abort an empty transaction (no EndTxn is sent for it) to claim the partition now.
      const claim = await producer.transaction();
      await claim.abort();
      return producer;
    } catch (error) {
      this.#producer = null;
      await producer.disconnect().catch(() => undefined);
      throw toRunlogError(error, `opening the writer of partition ${this.#options.partition} of ${this.#options.topic}`);
    }
  }

  async #dropProducer(): Promise<void> {
    const producer = this.#producer;
    this.#producer = null;
    if (producer) await producer.then((p) => p.disconnect()).catch(() => undefined);
  }
}

function copyRecord(record: AppendRecord): AppendRecord {
  return { key: record.key, value: record.value === null ? null : new Uint8Array(record.value) };
}
