/**
 * Read-your-writes on Kafka: the end of read() and endOffset.
 *
 * A committed append becomes visible to read_committed readers only when its commit marker
 * lands, just after append resolved (transaction-pipeline.ts). Where the marker lands is not
 * known in advance: with transactions pipelined, the next batch's records may come before
 * it. So this remembers, per partition, the end of the records of this log's own last
 * committed append, and the end of read() is the LSO (end-offsets.ts) once it has passed
 * them (polled briefly, with the one retrier, src/retry.ts): everything of ours below it is
 * then decided, and the LSO never stops inside a transaction's records. endOffset waits a
 * little longer, for the LSO to pass the commit marker too, which usually comes right after
 * the records (if the next batch's records came first, it settles for the LSO past our
 * records after MARKER_SETTLE_MS): so endOffset does not move by itself when the marker
 * lands a moment after an append. Other processes' appends are seen once the LSO passes them.
 */
import type { Admin } from 'kafkajs';
import { RunlogError } from '../../errors.ts';
import { retry } from '../../retry.ts';
import { EndOffsets } from './end-offsets.ts';

/** How long endOffset and read wait for the commit markers of this log's own appends. */
const MARKER_WAIT_MS = 30_000;
/** How long endOffset waits for the LSO to pass the marker after our records, not only the records. */
const MARKER_SETTLE_MS = 2_000;

export class ReadYourWrites {
  readonly #topic: string;
  readonly #ends: EndOffsets;
  /** Throws once the log is closing: nothing may ask the admin then. */
  readonly #refuseIfClosed: () => void;
  /** Per partition: the end of the records of this log's last committed append (its last offset + 1; 0 before any). */
  readonly #committedEnd: bigint[];
  /** End-offset questions in flight (close waits for them before disconnecting the admin). */
  readonly #asking = new Set<Promise<bigint>>();

  constructor(admin: Admin, topic: string, partitions: number, refuseIfClosed: () => void) {
    this.#topic = topic;
    this.#ends = new EndOffsets(admin, topic);
    this.#refuseIfClosed = refuseIfClosed;
    this.#committedEnd = Array.from({ length: partitions }, () => 0n);
  }

  /** An append of this log committed at `offsets`. */
  committed(partition: number, offsets: readonly bigint[]): void {
    const end = offsets.length === 0 ? 0n : offsets.at(-1)! + 1n;
    if (end > this.#committedEnd[partition]!) this.#committedEnd[partition] = end;
  }

  /**
   * The LSO once it has passed this log's own committed records (read's end), or also the
   * commit marker after them (endOffset's, `withMarker`; see the top).
   */
  async stableEnd(partition: number, withMarker: boolean): Promise<bigint> {
    const records = this.#committedEnd[partition]!;
    const started = performance.now();
    const landed = async (): Promise<bigint> => {
      const stable = await this.stableOffset(partition);
      const settled = !withMarker || performance.now() - started > MARKER_SETTLE_MS;
      if (records === 0n || stable > records || (stable === records && settled)) return stable; // past the records (and the marker)
      throw new MarkersPending(stable);
    };
    try {
      return await retry(landed, { firstMs: 1, maxMs: 50, forMs: MARKER_WAIT_MS, retriable: (e) => e instanceof MarkersPending });
    } catch (error) {
      if (!(error instanceof MarkersPending)) throw error;
      throw new RunlogError(
        'LogUnavailable',
        `partition ${partition} of ${this.#topic}: the commit markers of appends made here have not landed after ${MARKER_WAIT_MS} ms (the LSO is ${error.stable}, below ${records})`,
      );
    }
  }

  /** The partition's LSO, asked through the admin; refused once the log is closing. */
  stableOffset(partition: number): Promise<bigint> {
    this.#refuseIfClosed();
    const asking = this.#ends.of(partition);
    this.#asking.add(asking);
    void asking.finally(() => this.#asking.delete(asking)).catch(() => undefined);
    return asking;
  }

  /** Resolves once every question already asked is answered (or failed). */
  async settled(): Promise<void> {
    await Promise.allSettled([...this.#asking]);
  }
}

/** The LSO has not passed this log's own records yet. */
class MarkersPending extends Error {
  constructor(readonly stable: bigint) {
    super(`the LSO is still ${stable}`);
  }
}
