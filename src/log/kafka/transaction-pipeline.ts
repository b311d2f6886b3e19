/**
 * TransactionPipeline: the writer of one Kafka partition, a group commit in front of two
 * transactional lanes (transactional-lane.ts), used in turn and pipelined.
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
 * moves past them). kafka-log.ts covers that gap for its own reads (see there).
 *
 * Fencing and ownership. Lane 0 is the ownership lane: claim() initialises it first
 * (InitProducerId: this bumps its epoch, aborts its open transaction and from then on the
 * coordinator refuses the older epochs) and only then lane 1. Of writers racing to claim
 * the partition, the one whose lane-0 InitProducerId came last owns it. The lanes are
 * claimed separately, though, so a loser may have claimed lane 1 after the owner did. The
 * rules that make that harmless:
 *   - Fencing seen on lane 0 is final: this writer is `Fenced` for good and never connects
 *     again (a new InitProducerId would fence the rightful owner in turn).
 *   - Fencing seen on lane 1 only says another writer claimed lane 1. Before claiming it
 *     again, this writer proves lane 0 is still its own, fencing nobody (lane.probe():
 *     AddPartitionsToTxn, refused for an older epoch); lost, it is Fenced. A writer that
 *     lost lane 0 thus never claims anything again.
 *   - A commit on lane 1 needs proof that lane 0 was still this writer's after lane 1's
 *     latest InitProducerId: normally the previous batch's commit on lane 0 (batches
 *     alternate, the first batch after a claim goes on lane 0, and a batch commits only
 *     after the previous one did); after lane 1 is claimed again, a probe of lane 0.
 * Why that suffices: the owner O initialised lane 0 after every other writer W did, so W's
 * lane 0 is fenced from then on. Any commit of W on lane 1 comes after a proof that W's lane 0
 * was current after W's latest lane-1 InitProducerId, hence that InitProducerId came before
 * O's lane-0 one, hence before O's lane-1 one, which fences it: W's commit either came before
 * O's claim ended (and O, replaying after its claim, sees it: InitProducerId completes the
 * id's pending transaction first) or it fails. So after any race only O acknowledges
 * anything, and W's appends fail with Fenced. If a batch's begin or produce on lane 1 is
 * refused as fenced, nothing of it was written: it is produced again on the re-claimed lane.
 * If its commit is refused, the batch fails (LogUnavailable) and the writer recovers.
 * A stale writer's transaction never becomes visible to read_committed readers.
 *
 * Other failures (broker unreachable, timeouts) fail with LogUnavailable. If the failure hit
 * the commit itself, its outcome is unknown (the coordinator may have logged the commit): a
 * caller that keeps state beside the log must re-read the log after a LogUnavailable append.
 */
import type { Kafka } from 'kafkajs';
import { RunlogError, isRunlogError } from '../../errors.ts';
import type { AppendRecord } from '../event-log.ts';
import { splitBatches } from './batch-size.ts';
import { isFencingError, toRunlogError } from './errors.ts';
import { TransactionalLane, type OpenTransaction } from './transactional-lane.ts';
import type { ProducedMessage } from './transactional-producer.ts';

/** How much one transaction coalesces (at least one append): bounds a batch's latency; record batches are split to fit the topic anyway (batch-size.ts). */
const MAX_BATCH_BYTES = 512 * 1024;
const MAX_BATCH_RECORDS = 5000;
const RECORD_OVERHEAD_BYTES = 24;
/** How often one batch may claim lane 1 again after finding it fenced, before it fails. */
const MAX_RECLAIMS = 3;

interface Pending {
  records: readonly AppendRecord[];
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
}

export class TransactionPipeline {
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
  /** After a failure: lane 0 (its producer kept) must be proved still ours before it is initialised afresh. */
  #renewLane0 = false;
  /** A failure said lane 1 was fenced: once everything in flight has ended, find out whether lane 0 is still ours. */
  #ownershipInDoubt = false;
  #renewing: Promise<void> | null = null;
  /** Closed or fenced: for good. */
  #stopped: RunlogError | null = null;

  constructor(options: TransactionPipelineOptions) {
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
    if (this.#stopped) return Promise.reject(this.#stopped);
    if (this.#broken) return this.#refuseAfterRecovery(this.#broken);
    if (records.length === 0) return Promise.resolve([]);
    return new Promise((resolve, reject) => {
      // Copied now: the caller may reuse its buffers before this append's turn comes.
      this.#queue.push({ records: records.map(copyRecord), resolve, reject });
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
    await this.#connectLanes();
  }

  get #ownershipLane(): TransactionalLane {
    return this.#lanes[0]!;
  }

  /**
   * Both lanes, lane 0 first, on the first append or claim (and again after a failure),
   * never one alone later except lane 1 under the ownership rules (see the top).
   */
  async #connectLanes(): Promise<void> {
    if (this.#renewLane0) {
      this.#renewing ??= this.#renewOwnershipLane().finally(() => (this.#renewing = null));
      await this.#renewing;
    }
    await this.#ownershipLane.connected();
    await this.#lanes[1]!.connected();
  }

  /**
   * After a failure: prove lane 0 is still ours, fencing nobody, then let it connect afresh.
   * A lane 0 without a producer (its connect failed) has nothing to prove with: it connects
   * afresh, as on the first claim.
   */
  async #renewOwnershipLane(): Promise<void> {
    if (this.#ownershipLane.hasProducer) await this.#proveOwnership();
    await this.#ownershipLane.drop(false);
    this.#renewLane0 = false;
  }

  /** Resolves if lane 0 is still this writer's now; else this writer is Fenced for good (rejects with that), or rejects with why it could not tell. */
  async #proveOwnership(): Promise<void> {
    try {
      await this.#ownershipLane.probe();
    } catch (error) {
      if (isRunlogError(error) || !isFencingError(error))
        throw toRunlogError(error, `checking that ${this.#describe} is still this writer's`);
      this.#stopped ??= toRunlogError(error, `append to ${this.#describe}`);
      throw this.#stopped;
    }
  }

  /** Lane 1 was claimed by another writer: claim it again if lane 0 is ours before and after (see the top). */
  async #reclaim(lane: TransactionalLane): Promise<void> {
    await this.#proveOwnership();
    await lane.drop(false);
    await lane.connected();
    await this.#proveOwnership();
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
      await this.#connectLanes();
      for (let reclaims = 0; ; reclaims++) {
        try {
          transaction = await lane.begin();
          const refusal = this.#stopped ?? this.#broken; // closed, or an earlier batch failed, while the lane connected
          if (refusal) throw refusal;
          offsets = await this.#send(transaction, batch);
          break;
        } catch (error) {
          // Refused as fenced before the produce was acknowledged: nothing of the batch was written.
          if (lane === this.#ownershipLane || isRunlogError(error) || !isFencingError(error) || reclaims >= MAX_RECLAIMS) throw error;
          transaction = undefined;
          await this.#reclaim(lane);
        }
      }
      produced({ transaction });
    } catch (error) {
      produced({ failure: this.#failed(error, transaction, lane) });
    }
    lane.endsWhen(outcome.then((failure) => failure === null));
    void outcome.then(async (failure) => settle(batch, failure === null ? null : await this.#reported(failure), offsets));
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
    if (fenced && lane === this.#ownershipLane) this.#stopped ??= toRunlogError(fenced, `append to ${this.#describe}`);
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
      this.#broken = this.#failure(error, lane);
      this.#recovering = this.#recover();
    }
    for (const pending of this.#queue.splice(0)) void this.#refuseAfterRecovery(this.#broken).catch(pending.reject);
    const fenced = isFencingError(error) || transaction === undefined ? null : await this.#abortTelling(transaction);
    const failure = this.#failure(fenced ?? error, lane);
    if (failure.code === 'Fenced') this.#stopped ??= failure;
    return failure;
  }

  /**
   * A lane's failure as this writer reports it. Fencing is final only on lane 0; on lane 1
   * it says another writer claimed that lane, and whether this writer still owns the
   * partition is found out (fencing nobody) before it claims anything again.
   */
  #failure(error: unknown, lane: TransactionalLane): RunlogError {
    const failure = toRunlogError(error, `append to ${this.#describe}`);
    if (failure.code !== 'Fenced' || lane === this.#ownershipLane || isRunlogError(error)) return failure;
    this.#ownershipInDoubt = true;
    const why =
      'another writer claimed its second transactional lane; whether this writer still owns the partition is checked before it writes again';
    return new RunlogError('LogUnavailable', `append to ${this.#describe}: ${why} (${failure.message})`, { cause: error });
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
    if (this.#ownershipInDoubt) {
      this.#ownershipInDoubt = false;
      await this.#proveOwnership().catch(() => undefined); // lost: this writer is Fenced; cannot tell: asked again before lane 0 connects afresh
    }
    await this.#lanes[1]!.drop(false);
    this.#renewLane0 = true;
    this.#turn = 0;
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
