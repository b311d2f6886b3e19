/**
 * Reading the partitions a projection folds, up to the end each had when its read began, in
 * one of two orders:
 *   - by partition: each partition from its position to its end, one after another;
 *   - by time: every partition at once, merged by the store-clock time of its events (ties:
 *     the lower partition, then the lower offset). Within a partition, offset order always
 *     holds: a tombstone (no time of its own) goes with the record before it, and an event
 *     stamped earlier than the one before it (a clock stepped back) waits its turn behind it.
 * Each partition's records are decoded as their batch arrives (a batch's values may be views
 * of the log's buffers, valid only until the next batch is asked for). After the last record
 * of a partition comes an `end` with the end offset taken before the read: the records below
 * it that were not delivered are holes (compaction, Kafka's transaction markers).
 */
import { eventOfRecord } from '../events/record-event.ts';
import type { RunlogEvent } from '../events/types.ts';
import { batchesOf, type EventLog, type LogRecord } from '../log/event-log.ts';

export interface DecodedRecord {
  partition: number;
  offset: bigint;
  key: string;
  /** The record's bytes (null: a tombstone): a checkpoint anchors its last record (checkpoint.ts). */
  value: Uint8Array | null;
  /** null: a tombstone. */
  event: RunlogEvent | null;
}

export type ReadItem = { kind: 'records'; records: readonly DecodedRecord[] } | { kind: 'end'; partition: number; end: bigint };

/** What a reader asks of the run: where each partition starts, and whether it is done with one (its `until` reached). */
export interface ReadPlan {
  partitions: readonly number[];
  position: ReadonlyMap<number, bigint>;
  isDone(partition: number): boolean;
}

function decode(partition: number, record: LogRecord): DecodedRecord {
  return {
    partition,
    offset: record.offset,
    key: record.key,
    value: record.value,
    event: record.value === null ? null : eventOfRecord(record.value, partition, record.offset),
  };
}

export async function* readByPartition(log: EventLog, plan: ReadPlan, signal: AbortSignal | null): AsyncGenerator<ReadItem> {
  for (const p of plan.partitions) {
    if (plan.isDone(p)) continue;
    const end = await log.endOffset(p);
    for await (const batch of batchesOf(log.read(p, plan.position.get(p)!))) {
      yield { kind: 'records', records: batch.map((record) => decode(p, record)) };
      if (plan.isDone(p) || signal?.aborted === true) break;
    }
    if (signal?.aborted === true) return;
    yield { kind: 'end', partition: p, end };
  }
}

/** One partition's records during a merge: the decoded batch at hand, and the time of the record before. */
class Cursor {
  #batch: DecodedRecord[] = [];
  #index = 0;
  #lastAt = Number.NEGATIVE_INFINITY;

  constructor(
    readonly partition: number,
    readonly end: bigint,
    private readonly batches: AsyncIterator<readonly LogRecord[]>,
  ) {}

  /** Fills the batch if it ran out; false once the partition has no more records. */
  async ready(): Promise<boolean> {
    while (this.#index >= this.#batch.length) {
      const next = await this.batches.next();
      if (next.done === true) return false;
      this.#batch = next.value.map((record) => decode(this.partition, record));
      this.#index = 0;
    }
    return true;
  }

  hasHead(): boolean {
    return this.#index < this.#batch.length;
  }

  /** The time the head record sorts by: its event's, never before the record before it. */
  headAt(): number {
    const event = this.#batch[this.#index]!.event;
    return event === null ? this.#lastAt : Math.max(this.#lastAt, event.at);
  }

  take(): DecodedRecord {
    this.#lastAt = this.headAt();
    return this.#batch[this.#index++]!;
  }

  async close(): Promise<void> {
    await this.batches.return?.();
  }
}

const MERGED_BATCH = 512;

export async function* readByTime(log: EventLog, plan: ReadPlan, signal: AbortSignal | null): AsyncGenerator<ReadItem> {
  const cursors: Cursor[] = [];
  try {
    for (const p of plan.partitions) {
      if (plan.isDone(p)) continue;
      const end = await log.endOffset(p);
      cursors.push(new Cursor(p, end, batchesOf(log.read(p, plan.position.get(p)!))[Symbol.asyncIterator]()));
    }
    let open = cursors;
    while (open.length > 0 && signal?.aborted !== true) {
      const ready = await Promise.all(open.map((cursor) => cursor.ready()));
      for (const cursor of open.filter((_, i) => !ready[i])) yield { kind: 'end', partition: cursor.partition, end: cursor.end };
      open = open.filter((cursor, i) => ready[i] && !plan.isDone(cursor.partition));
      const merged: DecodedRecord[] = [];
      // Take the earliest head while every cursor has one (one that ran out is refilled before the next comparison).
      while (open.length > 0 && merged.length < MERGED_BATCH && open.every((cursor) => cursor.hasHead()))
        merged.push(earliest(open).take());
      if (merged.length > 0) yield { kind: 'records', records: merged };
      open = open.filter((cursor) => !plan.isDone(cursor.partition));
    }
  } finally {
    await Promise.allSettled(cursors.map((cursor) => cursor.close()));
  }
}

function earliest(cursors: readonly Cursor[]): Cursor {
  let best = cursors[0]!;
  for (const cursor of cursors) {
    const at = cursor.headAt();
    const bestAt = best.headAt();
    if (at < bestAt || (at === bestAt && cursor.partition < best.partition)) best = cursor;
  }
  return best;
}
