/**
 * The two transactional lanes of a partition's pipeline (transaction-pipeline.ts), taken in
 * turn, and the rules of who owns the partition.
 *
 * Lane 0 is the ownership lane: claim() initialises it first
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
 */
import type { Kafka } from 'kafkajs';
import { RunlogError, isRunlogError } from '../../errors.ts';
import { isFencingError, toRunlogError } from './errors.ts';
import { TransactionalLane } from './transactional-lane.ts';

export interface LanePairOptions {
  kafka: Kafka;
  topic: string;
  partition: number;
  transactionTimeoutMs: number;
  /** Names the partition in errors: "partition 3 of runlog-events". */
  describe: string;
}

export class LanePair {
  readonly #describe: string;
  readonly #lanes: readonly [TransactionalLane, TransactionalLane];
  /** Stops the pipeline for good, with this Fenced error (unless it was stopped already); answers why it is stopped. */
  readonly #fence: (fenced: RunlogError) => RunlogError;
  #turn = 0;
  /** After a failure: lane 0 (its producer kept) must be proved still ours before it is initialised afresh. */
  #renewLane0 = false;
  /** A failure said lane 1 was fenced: once everything in flight has ended, find out whether lane 0 is still ours. */
  #ownershipInDoubt = false;
  #renewing: Promise<void> | null = null;

  constructor(options: LanePairOptions, fence: (fenced: RunlogError) => RunlogError) {
    this.#describe = options.describe;
    this.#fence = fence;
    const lane = (n: number): TransactionalLane =>
      new TransactionalLane({ ...options, transactionalId: `runlog:${options.topic}:${options.partition}:${n}` });
    this.#lanes = [lane(0), lane(1)];
  }

  isOwnershipLane(lane: TransactionalLane): boolean {
    return lane === this.#lanes[0];
  }

  /** The lane whose turn it is, once idle; the turn passes to the other, which begins its next transaction meanwhile. */
  async nextLane(): Promise<TransactionalLane> {
    const lane = this.#lanes[this.#turn]!;
    this.#turn = (this.#turn + 1) % this.#lanes.length;
    await lane.idle();
    this.#lanes[this.#turn]!.prepareNext(); // the lane after this one
    return lane;
  }

  /**
   * Both lanes, lane 0 first, on the first append or claim (and again after a failure),
   * never one alone later except lane 1 under the ownership rules (see the top).
   */
  async connect(): Promise<void> {
    if (this.#renewLane0) {
      this.#renewing ??= this.#renewOwnershipLane().finally(() => (this.#renewing = null));
      await this.#renewing;
    }
    await this.#lanes[0].connected();
    await this.#lanes[1].connected();
  }

  /**
   * After a failure: prove lane 0 is still ours, fencing nobody, then let it connect afresh.
   * A lane 0 without a producer (its connect failed) has nothing to prove with: it connects
   * afresh, as on the first claim.
   */
  async #renewOwnershipLane(): Promise<void> {
    if (this.#lanes[0].hasProducer) await this.#proveOwnership();
    await this.#lanes[0].drop(false);
    this.#renewLane0 = false;
  }

  /** Resolves if lane 0 is still this writer's now; else this writer is Fenced for good (rejects with that), or rejects with why it could not tell. */
  async #proveOwnership(): Promise<void> {
    try {
      await this.#lanes[0].probe();
    } catch (error) {
      if (isRunlogError(error) || !isFencingError(error))
        throw toRunlogError(error, `checking that ${this.#describe} is still this writer's`);
      throw this.#fence(toRunlogError(error, `append to ${this.#describe}`));
    }
  }

  /** Lane 1 was claimed by another writer: claim it again if lane 0 is ours before and after (see the top). */
  async reclaim(lane: TransactionalLane): Promise<void> {
    await this.#proveOwnership();
    await lane.drop(false);
    await lane.connected();
    await this.#proveOwnership();
  }

  /**
   * A lane's failure as this writer reports it. Fencing is final only on lane 0; on lane 1
   * it says another writer claimed that lane, and whether this writer still owns the
   * partition is found out (fencing nobody) before it claims anything again.
   */
  failure(error: unknown, lane: TransactionalLane): RunlogError {
    const failure = toRunlogError(error, `append to ${this.#describe}`);
    if (failure.code !== 'Fenced' || this.isOwnershipLane(lane) || isRunlogError(error)) return failure;
    this.#ownershipInDoubt = true;
    const why =
      'another writer claimed its second transactional lane; whether this writer still owns the partition is checked before it writes again';
    return new RunlogError('LogUnavailable', `append to ${this.#describe}: ${why} (${failure.message})`, { cause: error });
  }

  /**
   * Once every batch in flight after a failure has ended: find out whether lane 0 is still
   * ours if lane 1 was fenced, drop lane 1's producer; the next connect() proves lane 0 still
   * ours, then connects both afresh, and the next batch goes on lane 0.
   */
  async afterFailure(): Promise<void> {
    if (this.#ownershipInDoubt) {
      this.#ownershipInDoubt = false;
      await this.#proveOwnership().catch(() => undefined); // lost: this writer is Fenced; cannot tell: asked again before lane 0 connects afresh
    }
    await this.#lanes[1].drop(false);
    this.#renewLane0 = true;
    this.#turn = 0;
  }

  /** Drops both lanes for good (the writer closes): neither connects again. */
  async close(): Promise<void> {
    await Promise.all(this.#lanes.map((lane) => lane.close()));
  }
}
