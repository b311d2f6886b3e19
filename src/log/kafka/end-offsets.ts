/**
 * End offsets of the topic's partitions, as read_committed readers see them.
 *
 * kafkajs's admin.fetchTopicOffsets sends ListOffsets with isolation level READ_COMMITTED
 * (its default), so the "high" offset it answers is the partition's last stable offset
 * (LSO): the high watermark, held back to the first offset of the oldest still-open
 * transaction. That is the right end for runlog: records at or past the LSO cannot be read
 * yet, and every record below it is either committed (readable) or aborted (skipped).
 *
 * The LSO moves past a committed transaction's records only once its commit markers are
 * written, a moment after the commit returns; read-your-writes.ts covers that gap.
 */
import type { Admin } from 'kafkajs';
import { RunlogError } from '../../errors.ts';
import { retry } from '../../retry.ts';
import { isStaleLeaderError, toRunlogError } from './errors.ts';

const STALE_LEADER_TRIES = 5;

export class EndOffsets {
  readonly #admin: Admin;
  readonly #topic: string;

  constructor(admin: Admin, topic: string) {
    this.#admin = admin;
    this.#topic = topic;
  }

  /**
   * The LSO of every partition, indexed by partition. kafkajs answers from cached metadata;
   * right after a topic is created (or a leader moved) that can name the wrong leader, which
   * answers NOT_LEADER_OR_FOLLOWER: ask again a few times, backing off, each time after refreshing
   * the topic's metadata.
   */
  async all(): Promise<bigint[]> {
    const ask = async (tryNumber: number): Promise<bigint[]> => {
      if (tryNumber > 1) await this.#admin.fetchTopicMetadata({ topics: [this.#topic] }).catch(() => undefined);
      const ends: bigint[] = [];
      for (const { partition, high } of await this.#admin.fetchTopicOffsets(this.#topic)) ends[partition] = BigInt(high);
      return ends;
    };
    try {
      return await retry(ask, { firstMs: 50, maxMs: 400, tries: STALE_LEADER_TRIES, retriable: isStaleLeaderError });
    } catch (error) {
      throw toRunlogError(error, `reading the end offsets of topic ${this.#topic}`);
    }
  }

  async of(partition: number): Promise<bigint> {
    const end = (await this.all())[partition];
    if (end === undefined) throw new RunlogError('LogUnavailable', `topic ${this.#topic} reports no partition ${partition}`);
    return end;
  }
}
