/**
 * Where to start reading an entry's events, for the console's history endpoint: a ticket's
 * timeline is read from shortly before its submission, not from its partition's first record.
 *
 * A sparse index per partition, caught up as AgentBacklog is (each request first reads what
 * was appended since the last one; passes one at a time): every `every`-th record gives a
 * sample, its offset and the latest store-clock time of the records up to it, a running
 * maximum. An entry submitted at T (Entry.submittedAt, its Submitted event's time) has its
 * Submitted after the last sample whose maximum is below T: every record up to that sample is
 * stamped before T. The maximum rather than the sample's own time, because the store clock
 * may step back (a restart on another machine); the maximum never does, so the samples stay
 * sorted for a binary search. Memory: one offset and one number per `every` records.
 */
import { decodeEvent } from '../events/codec.ts';
import type { EventLog } from '../log/event-log.ts';

export const SAMPLE_EVERY = 1024;

interface Samples {
  /** Offsets of the sampled records, ascending. */
  offsets: bigint[];
  /** For each, the latest time of every record up to it (ascending too). */
  maxAts: number[];
  /** The next offset to read, the latest time so far, records since the last sample. */
  next: bigint;
  maxAt: number;
  since: number;
}

export class EntryStarts {
  readonly #log: EventLog;
  readonly #every: number;
  readonly #partitions: Samples[];
  #pass: Promise<unknown> = Promise.resolve();

  constructor(log: EventLog, every = SAMPLE_EVERY) {
    this.#log = log;
    this.#every = every;
    this.#partitions = Array.from({ length: log.partitions }, () => ({ offsets: [], maxAts: [], next: 0n, maxAt: -Infinity, since: 0 }));
  }

  /** The offset to read `partition` from to see every record stamped at or after `at` (0 when none is known to lie before). */
  async startOf(partition: number, at: number): Promise<bigint> {
    const pass = this.#pass.then(() => this.#readToEnd(partition));
    this.#pass = pass.catch(() => undefined);
    await pass;
    const { offsets, maxAts } = this.#partitions[partition]!;
    // The last sample whose maximum is below `at`: binary search over the ascending maxima.
    let low = 0;
    let high = maxAts.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (maxAts[middle]! < at) low = middle + 1;
      else high = middle;
    }
    return low === 0 ? 0n : offsets[low - 1]! + 1n;
  }

  async #readToEnd(partition: number): Promise<void> {
    const samples = this.#partitions[partition]!;
    for await (const record of this.#log.read(partition, samples.next)) {
      samples.next = record.offset + 1n;
      if (record.value !== null) samples.maxAt = Math.max(samples.maxAt, decodeEvent(record.value).at);
      if (++samples.since < this.#every) continue;
      samples.since = 0;
      samples.offsets.push(record.offset);
      samples.maxAts.push(samples.maxAt);
    }
  }
}
