/**
 * End offsets of the topic's partitions, as read_committed readers see them.
 *
 * kafkajs's admin.fetchTopicOffsets sends ListOffsets with isolation level READ_COMMITTED
 * (its default), so the "high" offset it answers is the partition's last stable offset
 * (LSO): the high watermark, held back to the first offset of the oldest still-open
 * transaction. That is the right end for runlog: records at or past the LSO cannot be read
 * yet, and every record below it is either committed (readable) or aborted (skipped).
 *
 * A transaction's commit returns once the coordinator has logged the decision; the commit
 * markers reach the partition a moment later, and only then does the LSO move past the
 * batch. `waitFor` lets an append resolve only once its records are visible, so a read or
 * endOffset right after an append sees them (and the next transaction of the same producer
 * does not bounce off CONCURRENT_TRANSACTIONS). Waiters share one polling loop.
 */
import type { Admin } from 'kafkajs';
import { RunlogError } from '../../errors.ts';
import { toRunlogError } from './errors.ts';

const VISIBLE_TIMEOUT_MS = 30_000;

interface Waiter {
  partition: number;
  offset: bigint;
  deadline: number;
  resolve: () => void;
  reject: (error: RunlogError) => void;
}

export class EndOffsets {
  readonly #admin: Admin;
  readonly #topic: string;
  #waiters: Waiter[] = [];
  #polling = false;

  constructor(admin: Admin, topic: string) {
    this.#admin = admin;
    this.#topic = topic;
  }

  /** The LSO of every partition, indexed by partition. */
  async all(): Promise<bigint[]> {
    try {
      const offsets = await this.#admin.fetchTopicOffsets(this.#topic);
      const ends: bigint[] = [];
      for (const { partition, high } of offsets) ends[partition] = BigInt(high);
      return ends;
    } catch (error) {
      throw toRunlogError(error, `reading the end offsets of topic ${this.#topic}`);
    }
  }

  async of(partition: number): Promise<bigint> {
    const end = (await this.all())[partition];
    if (end === undefined) throw new RunlogError('LogUnavailable', `topic ${this.#topic} reports no partition ${partition}`);
    return end;
  }

  /** Resolves once the LSO of `partition` is at least `offset`. */
  waitFor(partition: number, offset: bigint): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#waiters.push({ partition, offset, deadline: Date.now() + VISIBLE_TIMEOUT_MS, resolve, reject });
      void this.#poll();
    });
  }

  async #poll(): Promise<void> {
    if (this.#polling) return;
    this.#polling = true;
    try {
      while (this.#waiters.length > 0) await this.#pollOnce();
    } finally {
      this.#polling = false;
    }
  }

  async #pollOnce(): Promise<void> {
    let ends: bigint[];
    try {
      ends = await this.all();
    } catch (error) {
      ends = [];
      if (this.#waiters.every((w) => Date.now() > w.deadline)) this.#failAll(error as RunlogError);
    }
    const now = Date.now();
    this.#waiters = this.#waiters.filter((w) => {
      const end = ends[w.partition];
      if (end !== undefined && end >= w.offset) w.resolve();
      else if (now > w.deadline) w.reject(this.#notVisible(w, end));
      else return true;
      return false;
    });
    if (this.#waiters.length > 0) await new Promise((resolve) => setTimeout(resolve, 1));
  }

  #notVisible(w: Waiter, end: bigint | undefined): RunlogError {
    return new RunlogError(
      'LogUnavailable',
      `partition ${w.partition} of ${this.#topic}: committed records below offset ${w.offset} are not visible after ${VISIBLE_TIMEOUT_MS} ms (end offset ${end})`,
    );
  }

  #failAll(error: RunlogError): void {
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const w of waiters) w.reject(error);
  }
}
