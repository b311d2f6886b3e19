/**
 * One transactional producer of a partition's writer (transaction-pipeline.ts keeps two and
 * alternates between them). A lane runs one transaction at a time and remembers when its
 * last one ended, so the writer can wait for the lane before starting the next.
 *
 * Begun ahead. When the writer starts a batch on the other lane, this lane begins its next
 * transaction (AddPartitionsToTxn) once its own last one has committed, before any records
 * exist for it: that round trip is then off the path a batch waits on, which is only
 * Produce and EndTxn. (Begun right after its commit instead, it would mostly be refused with
 * CONCURRENT_TRANSACTIONS while the commit markers are written.) A transaction begun ahead and not
 * used within IDLE_ABORT_MS is aborted (its abort marker takes an offset in the partition),
 * so none stays open until the coordinator times it out: that would bump the epoch, and the
 * lane's next request would look fenced.
 */
import type { Kafka } from 'kafkajs';
import { RunlogError } from '../../errors.ts';
import { toRunlogError } from './errors.ts';
import { TransactionalProducer } from './transactional-producer.ts';

export interface LaneOptions {
  kafka: Kafka;
  topic: string;
  partition: number;
  transactionalId: string;
  transactionTimeoutMs: number;
  /** Names the partition in errors: "partition 3 of runlog-events". */
  describe: string;
}

/** An open transaction of the lane: produce into it, then commit or abort it. */
export type OpenTransaction = Pick<TransactionalProducer, 'produce' | 'sendOffsets' | 'commit' | 'abort'>;

const IDLE_ABORT_MS = 10_000;

interface BegunAhead {
  producer: Promise<TransactionalProducer>;
  begun: Promise<void>;
  timer: NodeJS.Timeout;
}

export class TransactionalLane {
  readonly #options: LaneOptions;
  readonly #idleAbortMs: number;
  #producer: Promise<TransactionalProducer> | null = null;
  /** Settles once the lane's last transaction has ended, however it ended. */
  #ended: Promise<void> = Promise.resolve();
  #ahead: BegunAhead | null = null;
  #lastCommitted = false;
  /** The writer was closed: the lane never connects again. */
  #closed = false;

  constructor(options: LaneOptions) {
    this.#options = options;
    this.#idleAbortMs = Math.min(IDLE_ABORT_MS, options.transactionTimeoutMs / 3);
  }

  /** Resolves once the lane's previous transaction has ended (committed, aborted or failed). */
  idle(): Promise<void> {
    return this.#ended;
  }

  /**
   * The lane's next transaction, open: the one begun ahead, or one begun now. Call once idle
   * and connected: begin never connects, so a lane dropped meanwhile (the log closing) fails
   * here instead of claiming the partition again.
   */
  async begin(): Promise<OpenTransaction> {
    if (this.#producer === null) throw new RunlogError('LogUnavailable', `the writer of ${this.#options.describe} is not connected`);
    const producer = await this.#producer;
    const ahead = this.#takeAhead();
    await (ahead ?? producer.begin());
    return producer;
  }

  /** The transaction begun last has ended once `committed` settles (true: it committed). */
  endsWhen(committed: Promise<boolean>): void {
    this.#lastCommitted = false;
    this.#ended = committed.then((ok) => {
      this.#lastCommitted = ok;
    }, noop);
  }

  /** Begins the next transaction ahead, once the last one has committed (not after a failure). */
  prepareNext(): void {
    void this.#ended.then(() => {
      if (this.#lastCommitted) void this.#beginAhead();
    });
  }

  /**
   * Proves the lane's producer is still its transactional id's current one, fencing nobody:
   * once the lane is idle, AddPartitionsToTxn, which the coordinator refuses for an older
   * epoch. The transaction it opens is the lane's next one, begun ahead (the next batch uses
   * it, or it is aborted when idle; if one was begun ahead already, the request only asks
   * again). Rejects with the coordinator's refusal (a fencing error) or a connection error.
   */
  async probe(): Promise<void> {
    await this.#ended;
    const producer = this.#producer;
    if (producer === null) throw new RunlogError('LogUnavailable', `the writer of ${this.#options.describe} is not connected`);
    await (this.#ahead === null ? this.#beginAhead() : (await producer).begin());
  }

  /** Whether the lane has a producer (connected, or connecting). */
  get hasProducer(): boolean {
    return this.#producer !== null;
  }

  connected(): Promise<TransactionalProducer> {
    if (this.#closed) return Promise.reject(new RunlogError('Stopped', `the writer of ${this.#options.describe} is closed`));
    this.#producer ??= this.#connect();
    return this.#producer;
  }

  /**
   * Drops the lane for good: a claim still connecting the other lane when the writer closes
   * (a queue stopped or a partition released during an acquire or a rebuild) must not connect
   * this one after: its producer would never be disconnected (the process would not exit), and
   * its InitProducerId would fence the partition's next owner.
   */
  async close(): Promise<void> {
    this.#closed = true;
    await this.drop(true);
  }

  /**
   * Disconnects; the next begin connects a fresh producer, whose InitProducerId aborts
   * whatever this one left open. `abortAhead`: abort a transaction begun ahead first
   * (closing cleanly), rather than leave that to the next InitProducerId (after a failure).
   */
  async drop(abortAhead: boolean): Promise<void> {
    const ahead = this.#takeAhead();
    const producer = this.#producer;
    this.#producer = null;
    if (producer === null) return;
    if (abortAhead && ahead) await ahead.then(() => producer.then((p) => p.abort())).catch(noop);
    await producer.then((p) => p.disconnect()).catch(noop);
  }

  /** Begins the lane's next transaction now, unless one is begun already; answers when it is open. */
  #beginAhead(): Promise<void> | null {
    const producer = this.#producer;
    if (producer === null || this.#ahead !== null) return null;
    const begun = producer.then((p) => p.begin());
    begun.catch(noop); // a failure (fencing, say) is met by the begin() that takes it
    const timer = setTimeout(() => this.#abortIdle(), this.#idleAbortMs);
    timer.unref();
    this.#ahead = { producer, begun, timer };
    return begun;
  }

  /** The transaction begun ahead on the current producer, if any, now no longer ahead. */
  #takeAhead(): Promise<void> | null {
    const ahead = this.#ahead;
    this.#ahead = null;
    if (ahead === null) return null;
    clearTimeout(ahead.timer);
    return ahead.producer === this.#producer ? ahead.begun : null;
  }

  /** Nothing used the transaction begun ahead: abort it; the lane is idle again once that is done. */
  #abortIdle(): void {
    const ahead = this.#takeAhead();
    const producer = this.#producer;
    if (ahead === null || producer === null) return;
    this.#ended = ahead.then(() => producer.then((p) => p.abort())).catch(noop);
  }

  async #connect(): Promise<TransactionalProducer> {
    const { kafka, transactionalId, transactionTimeoutMs, topic, partition } = this.#options;
    try {
      return await TransactionalProducer.connect({ kafka, transactionalId, transactionTimeoutMs, topic, partition });
    } catch (error) {
      this.#producer = null;
      throw toRunlogError(error, `opening the writer of ${this.#options.describe}`);
    }
  }
}

function noop(): void {}
