/**
 * TransactionPipeline: the writer of one Kafka partition, a group commit in front of two
 * transactional lanes (transactional-lane.ts, lane-pair.ts), used in turn and pipelined.
 * One idea in about 330 lines: the batches' order and what one failure does to the batches
 * around it, which share one outcome chain; who owns the partition is lane-pair.ts's.
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
 *     aborts instead and fails with the same error. A batch takes its place in this order
 *     when it is taken from the queue, before its produce is sent: a failure found while it
 *     is still being produced makes it abort all the same, and the recovery from that failure
 *     waits for it to end (else it would commit after the recovery, behind a failed batch).
 * So what readers ever see is a prefix of the batches, in order, and once a batch fails,
 * every append called before that failure was reported fails too (EventLog's contract,
 * which lets the RunQueue keep more than one append in flight). Outcomes are reported in
 * batch order. After a failure the writer waits for everything in flight to end (appends
 * made meanwhile are refused with the failure), drops lane 1's producer, and for the next
 * append (or claim) proves lane 0 still its own, then initialises both afresh: their
 * InitProducerId aborts whatever the failure left open.
 *
 * Durable, not yet visible. EndTxn returns once the coordinator has logged the commit
 * decision (replicated, acks=all): from then on the transaction will complete even if
 * everything crashes, so the append is durable and answered. The commit markers reach the
 * partition a moment later; only then do read_committed readers see the records (the LSO
 * moves past them). read-your-writes.ts covers that gap for the log's own reads.
 *
 * Fencing and ownership: which writer owns the partition, and why a writer that lost it
 * never acknowledges anything, is lane-pair.ts's (the two lanes and their rules).
 *
 * Other failures (broker unreachable, timeouts) fail with LogUnavailable. If the failure hit
 * the commit itself, its outcome is unknown (the coordinator may have logged the commit): a
 * caller that keeps state beside the log must re-read the log after a LogUnavailable append.
 */
import type { Kafka } from 'kafkajs';
import { RunlogError, isRunlogError } from '../../errors.ts';
import { consumedKey, type AppendRecord, type ConsumedOffset } from '../event-log.ts';
import { splitBatches } from './batch-size.ts';
import { isFencingError, toRunlogError } from './errors.ts';
import { LanePair } from './lane-pair.ts';
import type { OpenTransaction, TransactionalLane } from './transactional-lane.ts';
import type { ProducedMessage } from './transactional-producer.ts';

/** How much one transaction coalesces (at least one append): bounds a batch's latency; record batches are split to fit the topic anyway (batch-size.ts). */
const MAX_BATCH_BYTES = 512 * 1024;
const MAX_BATCH_RECORDS = 5000;
const RECORD_OVERHEAD_BYTES = 24;
/** How often one batch may claim lane 1 again after finding it fenced, before it fails. */
const MAX_RECLAIMS = 3;

interface Pending {
  records: readonly AppendRecord[];
  /** The offset consumed elsewhere that commits with these records (EventLog.append's options), or null. */
  consumed: ConsumedOffset | null;
  resolve: (offsets: bigint[]) => void;
  reject: (error: unknown) => void;
}

/** How a batch's transaction ended: null once committed, else why it failed. Never rejects. */
type Outcome = Promise<RunlogError | null>;

/** How a batch's produce ended: its transaction, open with the records in it, or why it failed (#failed). */
type Produced = { transaction: OpenTransaction } | { failure: Promise<RunlogError> };

export interface TransactionPipelineOptions {
  kafka: Kafka;
  topic: string;
  partition: number;
  /** The largest record batch one produce request may carry (from the topic's max.message.bytes: batch-size.ts). */
  batchBytes: number;
  transactionTimeoutMs?: number;
  /** Counted into as transactions commit (shared by a log's pipelines: KafkaEventLog.stats). */
  stats?: TransactionStats;
}

/** What a log's writers committed: transactions, and the appends and records in them. */
export interface TransactionStats {
  transactions: number;
  appends: number;
  records: number;
}

export class TransactionPipeline {
  readonly #describe: string;
  readonly #batchBytes: number;
  readonly #lanes: LanePair;
  readonly #stats: TransactionStats;
  #queue: Pending[] = [];
  #draining = false;
  /** The outcome of the newest batch; the next batch commits only after it. */
  #lastOutcome: Outcome = Promise.resolve(null);
  /** Set from a failed batch until everything in flight has ended and the lanes are dropped (#recovering). */
  #broken: RunlogError | null = null;
  #recovering: Promise<void> = Promise.resolve();
  /** Closed or fenced: for good. */
  #stopped: RunlogError | null = null;

  constructor(options: TransactionPipelineOptions) {
    this.#describe = `partition ${options.partition} of ${options.topic}`;
    this.#batchBytes = options.batchBytes;
    this.#stats = options.stats ?? { transactions: 0, appends: 0, records: 0 };
    this.#lanes = new LanePair(
      { ...options, transactionTimeoutMs: options.transactionTimeoutMs ?? 60_000, describe: this.#describe },
      (fenced) => (this.#stopped ??= fenced),
    );
  }

  append(records: readonly AppendRecord[], consumed: ConsumedOffset | null = null): Promise<bigint[]> {
    if (this.#stopped) return Promise.reject(this.#stopped);
    if (this.#broken) return this.#refuseAfterRecovery(this.#broken);
    if (records.length === 0 && consumed === null) return Promise.resolve([]);
    return new Promise((resolve, reject) => {
      // Copied now: the caller may reuse its buffers before this append's turn comes.
      this.#queue.push({ records: records.map(copyRecord), consumed, resolve, reject });
      void this.#drain();
    });
  }

  /**
   * Claims the partition: connects both lanes (InitProducerId), lane 0 first, fencing any
   * earlier writer. After a failure, only once lane 0 is proved still this writer's (else Fenced).
   */
  async claim(): Promise<void> {
    if (this.#stopped) throw this.#stopped;
    await this.#recovering;
    if (this.#stopped) throw this.#stopped;
    await this.#lanes.connect();
  }

  async close(): Promise<void> {
    this.#stopped ??= new RunlogError('Stopped', `the Kafka log is closed (${this.#describe})`);
    this.#failQueued(this.#stopped);
    await this.#lastOutcome;
    await this.#lanes.close();
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
        const lane = await this.#lanes.nextLane();
        // Taken only now: whatever queued while the lane finished joins this batch.
        if (!this.#broken && this.#queue.length > 0) await this.#produce(lane, this.#takeBatch());
      }
    } finally {
      this.#draining = false;
    }
  }

  /**
   * Takes queued appends, oldest first, until the size bound (always at least one). Appends
   * committing consumed offsets of one group, topic and partition share a transaction, which
   * commits the highest of them; another's ends the batch.
   */
  #takeBatch(): Pending[] {
    let bytes = 0;
    let count = 0;
    let taken = 0;
    let consumed: string | null = null;
    for (const pending of this.#queue) {
      const size = pending.records.reduce((sum, r) => sum + r.key.length * 3 + (r.value?.length ?? 0) + RECORD_OVERHEAD_BYTES, 0);
      if (taken > 0 && (bytes + size > MAX_BATCH_BYTES || count + pending.records.length > MAX_BATCH_RECORDS)) break;
      const key = pending.consumed === null ? null : consumedKey(pending.consumed);
      if (key !== null && consumed !== null && key !== consumed) break;
      consumed ??= key;
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
    // The batch takes its place behind the newest one now, before anything is sent: a failure
    // found while it is produced then makes it abort, and #recover waits for it to end.
    let produced!: (result: Produced) => void;
    const result = new Promise<Produced>((resolve) => (produced = resolve));
    const outcome = this.#afterPrevious(async (previous) => {
      const done = await result;
      if (!('transaction' in done)) return previous ?? (await done.failure);
      return previous ? this.#abortAfter(done.transaction, previous, lane) : this.#commit(done.transaction, lane);
    });
    let transaction: OpenTransaction | undefined;
    let offsets: bigint[] = [];
    try {
      if (this.#stopped) throw this.#stopped; // closed: never connect again
      await this.#lanes.connect();
      for (let reclaims = 0; ; reclaims++) {
        try {
          transaction = await lane.begin();
          const refusal = this.#stopped ?? this.#broken; // closed, or an earlier batch failed, while the lane connected
          if (refusal) throw refusal;
          offsets = await this.#send(transaction, batch);
          const consumed = highestConsumed(batch);
          if (consumed !== null) await transaction.sendOffsets([consumed]);
          break;
        } catch (error) {
          // Refused as fenced before the produce was acknowledged: nothing of the batch was written.
          if (this.#lanes.isOwnershipLane(lane) || isRunlogError(error) || !isFencingError(error) || reclaims >= MAX_RECLAIMS) throw error;
          transaction = undefined;
          await this.#lanes.reclaim(lane);
        }
      }
      produced({ transaction });
    } catch (error) {
      produced({ failure: this.#failed(error, transaction, lane) });
    }
    lane.endsWhen(outcome.then((failure) => failure === null));
    void outcome.then(async (failure) => {
      if (failure === null) this.#counted(batch, offsets);
      settle(batch, failure === null ? null : await this.#reported(failure), offsets);
    });
  }

  /** Produces the batch's records, in record batches that fit the topic, one after the other; answers their offsets. */
  async #send(transaction: OpenTransaction, batch: Pending[]): Promise<bigint[]> {
    const offsets: bigint[] = [];
    for (const messages of splitBatches(
      batch.flatMap((pending) => pending.records.map(toMessage)),
      this.#batchBytes,
    )) {
      const base = await transaction.produce(messages);
      for (let i = 0; i < messages.length; i++) offsets.push(base + BigInt(i));
    }
    return offsets;
  }

  #counted(batch: readonly Pending[], offsets: readonly bigint[]): void {
    this.#stats.transactions++;
    this.#stats.appends += batch.length;
    this.#stats.records += offsets.length;
  }

  /** Chains a step after the newest batch's outcome; the step's outcome becomes the newest. */
  #afterPrevious(step: (previous: RunlogError | null) => Outcome): Outcome {
    const outcome = this.#lastOutcome.then(step);
    this.#lastOutcome = outcome;
    return outcome;
  }

  async #commit(transaction: OpenTransaction, lane: TransactionalLane): Outcome {
    try {
      await transaction.commit();
      return null;
    } catch (error) {
      return this.#failed(error, transaction, lane);
    }
  }

  /** The previous batch failed: this one must never become visible. */
  async #abortAfter(transaction: OpenTransaction, previous: RunlogError, lane: TransactionalLane): Outcome {
    const fenced = await this.#abortTelling(transaction);
    if (fenced && this.#lanes.isOwnershipLane(lane)) this.#stopped ??= toRunlogError(fenced, `append to ${this.#describe}`);
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
   * fenced on lane 0, for good. A failure that does not say why (a broker error racing a new
   * writer's InitProducerId, a broken connection) is asked through the transaction's abort.
   * Otherwise the abort is best effort: the next InitProducerId (ours after recovering, or
   * the new owner's) aborts the transaction anyway.
   */
  async #failed(error: unknown, transaction: OpenTransaction | undefined, lane: TransactionalLane): Promise<RunlogError> {
    if (this.#broken === null) {
      this.#broken = this.#lanes.failure(error, lane);
      this.#recovering = this.#recover();
    }
    for (const pending of this.#queue.splice(0)) void this.#refuseAfterRecovery(this.#broken).catch(pending.reject);
    const fenced = isFencingError(error) || transaction === undefined ? null : await this.#abortTelling(transaction);
    const failure = this.#lanes.failure(fenced ?? error, lane);
    if (failure.code === 'Fenced') this.#stopped ??= failure;
    return failure;
  }

  /**
   * Runs as soon as a batch fails: once every batch in flight has ended (their outcomes stop
   * changing: nothing new is produced while broken), find out whether lane 0 is still ours if
   * lane 1 was fenced, drop lane 1's producer and serve again: the next append (or claim)
   * proves lane 0 still ours, then connects both afresh, and its first batch goes on lane 0.
   * The failed appends, and those made meanwhile, are refused once this has run, with Fenced
   * if it found this writer fenced, else with the failure (#reported).
   */
  async #recover(): Promise<void> {
    for (let last = this.#lastOutcome; ; last = this.#lastOutcome) {
      await last;
      if (last === this.#lastOutcome) break;
    }
    this.#lastOutcome = Promise.resolve(null); // the failed batches are over: the next one does not follow them
    await this.#lanes.afterFailure();
    if (this.#stopped) this.#failQueued(this.#stopped);
    else this.#broken = null;
  }

  /**
   * A failure as reported to the appends it fails, once the writer has recovered from it:
   * if recovering found this writer fenced (lane 1's fencing turned out to be a new owner's),
   * Fenced; else the failure.
   */
  async #reported(failure: RunlogError): Promise<RunlogError> {
    await this.#recovering;
    return this.#stopped?.code === 'Fenced' ? this.#stopped : failure;
  }

  /** Refuses an append made while the writer is broken, once the failure is reported (#reported). */
  async #refuseAfterRecovery(broken: RunlogError): Promise<never> {
    throw await this.#reported(broken);
  }

  #failQueued(error: RunlogError): void {
    for (const pending of this.#queue.splice(0)) pending.reject(error);
  }
}

function settle(batch: readonly Pending[], failure: RunlogError | null, offsets: readonly bigint[]): void {
  let next = 0;
  for (const pending of batch) {
    if (failure) pending.reject(failure);
    else pending.resolve(pending.records.map(() => offsets[next++]!));
  }
}

/** The highest offset the batch's appends consumed (they share one group, topic and partition: #takeBatch), or null. */
function highestConsumed(batch: readonly Pending[]): ConsumedOffset | null {
  let highest: ConsumedOffset | null = null;
  for (const { consumed } of batch) if (consumed !== null && (highest === null || consumed.offset > highest.offset)) highest = consumed;
  return highest;
}

function toMessage(record: AppendRecord): ProducedMessage {
  const value = record.value === null ? null : Buffer.from(record.value.buffer, record.value.byteOffset, record.value.byteLength);
  return { key: record.key, value }; // a view of the copy made by append
}

function copyRecord(record: AppendRecord): AppendRecord {
  return { key: record.key, value: record.value === null ? null : new Uint8Array(record.value) };
}
