/**
 * The writer of one partition: a group commit in front of two transactional lanes
 * (transactional-lane.ts), used in turn and pipelined.
 *
 * Group commit. Appends queue up; one loop drains the queue, taking every queued append
 * (up to a size bound) into ONE transaction, produced as one record batch (consecutive
 * offsets) or, when its records outgrow the topic's max.message.bytes, as several produce
 * requests of one batch each (batch-size.ts), one after the other in the same transaction:
 * atomic all the same. Each append resolves with its records' offsets (each batch's base
 * offset from its produce response, + i) once the transaction has committed.
 *
 * Two lanes, pipelined. A transaction costs several round trips (AddPartitionsToTxn,
 * Produce, EndTxn), and the coordinator refuses a producer's next transaction
 * (CONCURRENT_TRANSACTIONS) until the commit markers of its previous one are written. So the
 * writer keeps two transactional producers, `runlog:<topic>:<partition>:0` and `:1`, and
 * alternates between them: batch n+1 is produced on one lane while batch n commits on the
 * other. Each lane runs one transaction at a time. Two rules keep the partition in order:
 *   - a batch is produced only after the previous batch's produce was acknowledged, so its
 *     records follow at higher offsets;
 *   - a batch commits only after the previous batch has committed. If that one failed, it
 *     aborts instead and fails with the same error.
 * So what readers ever see is a prefix of the batches, in order, and once a batch fails,
 * every append called before that failure was reported fails too (EventLog's contract,
 * which lets the RunQueue keep more than one append in flight). Outcomes are reported in
 * batch order. After a failure the writer waits for everything in flight to end (appends
 * made meanwhile are refused with the failure), drops both producers, and connects fresh
 * ones for the next append: their InitProducerId aborts whatever the failure left open.
 *
 * Durable, not yet visible. EndTxn returns once the coordinator has logged the commit
 * decision (replicated, acks=all): from then on the transaction will complete even if
 * everything crashes, so the append is durable and answered. The commit markers reach the
 * partition a moment later; only then do read_committed readers see the records (the LSO
 * moves past them). kafka-log.ts covers that gap for its own reads (see there).
 *
 * Fencing. claim() connects both lanes. A new writer of the partition does the same, which
 * bumps both epochs and aborts both ids' open transactions; the coordinator then refuses the
 * older epochs (INVALID_PRODUCER_EPOCH / PRODUCER_FENCED). A stale writer's next
 * AddPartitionsToTxn, Produce or EndTxn fails on whichever lane it uses, nothing of that
 * transaction ever becomes visible to read_committed readers, and this writer turns into a
 * permanent `Fenced` state: it never reconnects, because a new InitProducerId would fence
 * the rightful owner in turn.
 *
 * Other failures (broker unreachable, timeouts) fail with LogUnavailable. If the failure hit
 * the commit itself, its outcome is unknown (the coordinator may have logged the commit): a
 * caller that keeps state beside the log must re-read the log after a LogUnavailable append.
 */
import type { Kafka } from 'kafkajs';
import { RunlogError } from '../../errors.ts';
import type { AppendRecord } from '../event-log.ts';
import { splitBatches } from './batch-size.ts';
import { isFencingError, toRunlogError } from './errors.ts';
import { TransactionalLane, type OpenTransaction } from './transactional-lane.ts';
import type { ProducedMessage } from './transactional-producer.ts';

/** Stay well below the broker's default message.max.bytes (1 MiB) when coalescing appends. */
const MAX_BATCH_BYTES = 512 * 1024;
const MAX_BATCH_RECORDS = 5000;
const RECORD_OVERHEAD_BYTES = 24;

interface Pending {
  records: readonly AppendRecord[];
  resolve: (offsets: bigint[]) => void;
  reject: (error: unknown) => void;
}

/** How a batch's transaction ended: null once committed, else why it failed. Never rejects. */
type Outcome = Promise<RunlogError | null>;

export interface PartitionWriterOptions {
  kafka: Kafka;
  topic: string;
  partition: number;
  /** The largest record batch one produce request may carry (from the topic's max.message.bytes: batch-size.ts). */
  batchBytes: number;
  transactionTimeoutMs?: number;
}

export class PartitionWriter {
  readonly #describe: string;
  readonly #batchBytes: number;
  readonly #lanes: readonly TransactionalLane[];
  #turn = 0;
  #queue: Pending[] = [];
  #draining = false;
  /** The outcome of the newest batch; the next batch commits only after it. */
  #lastOutcome: Outcome = Promise.resolve(null);
  /** Set from a failed batch until everything in flight has ended and the lanes are dropped (#recovering). */
  #broken: RunlogError | null = null;
  #recovering: Promise<void> = Promise.resolve();
  /** Closed or fenced: for good. */
  #stopped: RunlogError | null = null;

  constructor(options: PartitionWriterOptions) {
    this.#describe = `partition ${options.partition} of ${options.topic}`;
    this.#batchBytes = options.batchBytes;
    this.#lanes = [0, 1].map(
      (lane) =>
        new TransactionalLane({
          kafka: options.kafka,
          topic: options.topic,
          partition: options.partition,
          transactionalId: `runlog:${options.topic}:${options.partition}:${lane}`,
          transactionTimeoutMs: options.transactionTimeoutMs ?? 60_000,
          describe: this.#describe,
        }),
    );
  }

  append(records: readonly AppendRecord[]): Promise<bigint[]> {
    const refusal = this.#stopped ?? this.#broken;
    if (refusal) return Promise.reject(refusal);
    if (records.length === 0) return Promise.resolve([]);
    return new Promise((resolve, reject) => {
      // Copied now: the caller may reuse its buffers before this append's turn comes.
      this.#queue.push({ records: records.map(copyRecord), resolve, reject });
      void this.#drain();
    });
  }

  /** Connects both lanes now (InitProducerId), fencing any earlier writer of the partition. */
  async claim(): Promise<void> {
    if (this.#stopped) throw this.#stopped;
    await this.#connectLanes();
  }

  /**
   * Both lanes connect together, on the first append or claim (and again after a failure),
   * never one alone later: a lane connecting after another writer claimed the partition
   * would fence that writer's lane in turn.
   */
  async #connectLanes(): Promise<void> {
    await Promise.all(this.#lanes.map((lane) => lane.connected()));
  }

  async close(): Promise<void> {
    this.#stopped ??= new RunlogError('Stopped', `the Kafka log is closed (${this.#describe})`);
    this.#failQueued(this.#stopped);
    await this.#lastOutcome;
    await this.#dropLanes(true);
  }

  async #drain(): Promise<void> {
    if (this.#draining) return;
    this.#draining = true;
    try {
      while (this.#queue.length > 0 && !this.#stopped) {
        if (this.#broken) {
          await this.#recovering;
          continue;
        }
        const lane = this.#lanes[this.#turn]!;
        this.#turn = (this.#turn + 1) % this.#lanes.length;
        await lane.idle();
        this.#lanes[this.#turn]!.prepareNext(); // the lane after this one
        // Taken only now: whatever queued while the lane finished joins this batch.
        if (!this.#broken && this.#queue.length > 0) await this.#produce(lane, this.#takeBatch());
      }
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

  /**
   * Begins a transaction on `lane` and produces the batch; returns once the produce is
   * acknowledged (or failed), leaving the commit to run after the previous batch's.
   */
  async #produce(lane: TransactionalLane, batch: Pending[]): Promise<void> {
    let transaction: OpenTransaction | undefined;
    let outcome: Outcome;
    let offsets: bigint[] = [];
    try {
      if (this.#stopped) throw this.#stopped; // closed: never connect again
      await this.#connectLanes();
      transaction = await lane.begin();
      const refusal = this.#stopped ?? this.#broken; // closed, or an earlier batch failed, while the lane connected
      if (refusal) throw refusal;
      offsets = await this.#send(transaction, batch);
      const produced = transaction;
      outcome = this.#afterPrevious((previous) => (previous ? this.#abortAfter(produced, previous) : this.#commit(produced)));
    } catch (error) {
      const failure = this.#failed(error, transaction);
      outcome = this.#afterPrevious(async (previous) => previous ?? (await failure));
    }
    lane.endsWhen(outcome.then((failure) => failure === null));
    void outcome.then((failure) => settle(batch, failure, offsets));
  }

  /** Produces the batch's records, in record batches that fit the topic, one after the other; answers their offsets. */
  async #send(transaction: OpenTransaction, batch: Pending[]): Promise<bigint[]> {
    const offsets: bigint[] = [];
    for (const messages of splitBatches(batch.flatMap((pending) => pending.records.map(toMessage)), this.#batchBytes)) {
      const base = await transaction.produce(messages);
      for (let i = 0; i < messages.length; i++) offsets.push(base + BigInt(i));
    }
    return offsets;
  }

  /** Chains a step after the newest batch's outcome; the step's outcome becomes the newest. */
  #afterPrevious(step: (previous: RunlogError | null) => Outcome): Outcome {
    const outcome = this.#lastOutcome.then(step);
    this.#lastOutcome = outcome;
    return outcome;
  }

  async #commit(transaction: OpenTransaction): Outcome {
    try {
      await transaction.commit();
      return null;
    } catch (error) {
      return this.#failed(error, transaction);
    }
  }

  /** The previous batch failed: this one must never become visible. */
  async #abortAfter(transaction: OpenTransaction, previous: RunlogError): Outcome {
    const fenced = await this.#abortTelling(transaction);
    if (fenced) this.#stopped ??= toRunlogError(fenced, `append to ${this.#describe}`);
    return previous;
  }

  /**
   * Aborts, best effort: not aborted now, the transaction is aborted when the lane
   * reconnects (or by its new owner). Answers the abort's error if it says this writer is
   * fenced, else null.
   */
  async #abortTelling(transaction: OpenTransaction): Promise<unknown> {
    try {
      await transaction.abort();
      return null;
    } catch (abortError) {
      return isFencingError(abortError) ? abortError : null;
    }
  }

  /**
   * Records a failed batch: the writer is broken until everything in flight has ended;
   * fenced, for good. A failure that does not say why (a broker error racing a new writer's
   * InitProducerId, a broken connection) is asked through the transaction's abort: refused
   * as fenced, this writer is fenced. Otherwise the abort is best effort: the next
   * InitProducerId (ours after recovering, or the new owner's) aborts the transaction anyway.
   */
  async #failed(error: unknown, transaction: OpenTransaction | undefined): Promise<RunlogError> {
    if (this.#broken === null) {
      this.#broken = toRunlogError(error, `append to ${this.#describe}`);
      this.#recovering = this.#recover();
    }
    this.#failQueued(this.#broken);
    const fenced = isFencingError(error) || transaction === undefined ? null : await this.#abortTelling(transaction);
    const failure = toRunlogError(fenced ?? error, `append to ${this.#describe}`);
    if (failure.code === 'Fenced') this.#stopped ??= failure;
    return failure;
  }

  /**
   * Runs as soon as a batch fails: once every batch in flight has ended (their outcomes stop
   * changing: nothing new is produced while broken), drop both producers and serve again; the
   * next append connects fresh ones. Appends meanwhile are refused with the failure.
   */
  async #recover(): Promise<void> {
    for (let last = this.#lastOutcome; ; last = this.#lastOutcome) {
      await last;
      if (last === this.#lastOutcome) break;
    }
    this.#lastOutcome = Promise.resolve(null); // the failed batches are over: the next one does not follow them
    await this.#dropLanes(false);
    if (this.#stopped) this.#failQueued(this.#stopped);
    else this.#broken = null;
  }

  #failQueued(error: RunlogError): void {
    for (const pending of this.#queue.splice(0)) pending.reject(error);
  }

  async #dropLanes(abortAhead: boolean): Promise<void> {
    await Promise.all(this.#lanes.map((lane) => lane.drop(abortAhead)));
  }
}

function settle(batch: readonly Pending[], failure: RunlogError | null, offsets: readonly bigint[]): void {
  let next = 0;
  for (const pending of batch) {
    if (failure) pending.reject(failure);
    else pending.resolve(pending.records.map(() => offsets[next++]!));
  }
}

function toMessage(record: AppendRecord): ProducedMessage {
  const value = record.value === null ? null : Buffer.from(record.value.buffer, record.value.byteOffset, record.value.byteLength);
  return { key: record.key, value }; // a view of the copy made by append
}

function copyRecord(record: AppendRecord): AppendRecord {
  return { key: record.key, value: record.value === null ? null : new Uint8Array(record.value) };
}
