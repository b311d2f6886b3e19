/**
 * The reference EventLog: one array of records per partition, kept in offset order.
 * Everything happens synchronously inside each call, so an append is trivially atomic
 * and offsets are dense until compaction removes records. Values are copied in and out
 * so no caller can change the log by mutating a buffer.
 */
import { RunlogError } from '../../errors.ts';
import type { AppendOptions, AppendRecord, EventLog, LogRecord, ReadOptions, RecordLimits, TailOptions } from '../event-log.ts';
import {
  checkAppendOptions,
  checkOffset,
  checkPartition,
  checkPartitionCount,
  checkReadOptions,
  checkRecords,
  checkTailOptions,
} from '../log-arguments.ts';
import { FRAME_LIMITS } from '../file/frame.ts';
import { AppendWaiters, tailRecords, type TailSource } from '../tail.ts';

export interface MemoryLogOptions {
  partitions: number;
}

/** The file log's limits: tests on the reference log meet what users meet on the default backend. */
export const MEMORY_LOG_LIMITS: RecordLimits = FRAME_LIMITS;

interface Partition {
  records: LogRecord[];
  /** The offset the next record gets; kept apart from `records` so compaction never lowers it. */
  nextOffset: bigint;
  /** Wakes tails waiting for an append. */
  waiters: AppendWaiters;
}

function copyRecord(record: LogRecord): LogRecord {
  // new Uint8Array(view) copies; `slice()` would not, for a Node Buffer.
  return { offset: record.offset, key: record.key, value: record.value === null ? null : new Uint8Array(record.value) };
}

/** Index of the first record with offset >= `offset` (binary search; offsets are increasing). */
function firstIndexAtOrAfter(records: readonly LogRecord[], offset: bigint): number {
  let lo = 0;
  let hi = records.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (records[mid]!.offset < offset) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The latest record of each key, tombstones dropped, in offset order. */
function compacted(records: readonly LogRecord[]): LogRecord[] {
  const latest = new Map<string, bigint>();
  for (const record of records) latest.set(record.key, record.offset);
  return records.filter((r) => r.value !== null && latest.get(r.key) === r.offset);
}

class MemoryLog implements EventLog {
  readonly kind = 'memory';
  readonly partitions: number;
  readonly maxRecordBytes = MEMORY_LOG_LIMITS.maxRecordBytes;
  readonly maxAppendBytes = MEMORY_LOG_LIMITS.maxAppendBytes;
  #parts: Partition[];
  #closed = false;

  constructor(partitions: number) {
    this.partitions = partitions;
    this.#parts = Array.from({ length: partitions }, () => ({ records: [], nextOffset: 0n, waiters: new AppendWaiters() }));
  }

  #partition(partition: number): Partition {
    if (this.#closed) throw new RunlogError('Stopped', 'the memory log is closed');
    return this.#parts[checkPartition(partition, this.partitions)]!;
  }

  async append(partition: number, records: readonly AppendRecord[], options?: AppendOptions): Promise<bigint[]> {
    const part = this.#partition(partition);
    checkAppendOptions(options, false, 'the memory log');
    const offsets = checkRecords(records, this, 'the memory log').map((record) => {
      const offset = part.nextOffset++;
      part.records.push(copyRecord({ offset, key: record.key, value: record.value }));
      return offset;
    });
    if (offsets.length > 0) part.waiters.wakeAll();
    return offsets;
  }

  read(partition: number, fromOffset: bigint, options?: ReadOptions): AsyncIterable<LogRecord> {
    const part = this.#partition(partition);
    checkOffset(fromOffset);
    const max = checkReadOptions(options);
    const end = part.nextOffset;
    return (async function* () {
      let count = 0;
      for (let i = firstIndexAtOrAfter(part.records, fromOffset); count < max; i++) {
        const record = part.records[i];
        if (record === undefined || record.offset >= end) return;
        count++;
        yield copyRecord(record);
      }
    })();
  }

  tail(partition: number, fromOffset: bigint, options: TailOptions): AsyncIterable<LogRecord> {
    const part = this.#partition(partition);
    checkOffset(fromOffset);
    const signal = checkTailOptions(options);
    const source: TailSource = {
      endOffset: () => part.nextOffset,
      read: (from) => this.read(partition, from),
      appended: (offset, signal) => (this.#closed ? Promise.resolve() : part.waiters.wait(offset, part.nextOffset, signal)),
      closed: () => this.#closed,
    };
    return tailRecords(source, fromOffset, signal);
  }

  async endOffset(partition: number): Promise<bigint> {
    return this.#partition(partition).nextOffset;
  }

  async compact(partition: number): Promise<void> {
    const part = this.#partition(partition);
    part.records = compacted(part.records);
  }

  async close(): Promise<void> {
    this.#closed = true;
    for (const part of this.#parts) part.waiters.wakeAll();
  }
}

export async function openMemoryLog(options: MemoryLogOptions): Promise<EventLog> {
  return new MemoryLog(checkPartitionCount(options.partitions, 'memory'));
}
