/**
 * Argument checks every EventLog backend applies before it touches anything, so that a
 * bad call is `InvalidArgument` (naming the value) and writes nothing, whatever the backend.
 */
import { invalidArgument } from '../errors.ts';
import { appendBytes, recordBytes, type AppendRecord, type ReadOptions, type RecordLimits, type TailOptions } from './event-log.ts';

function show(value: unknown): string {
  if (typeof value === 'bigint') return `${value}n`;
  if (typeof value === 'string') return JSON.stringify(value);
  if (value instanceof Uint8Array) return `Uint8Array(${value.length})`;
  try {
    return String(JSON.stringify(value) ?? value);
  } catch {
    return String(value);
  }
}

export function checkPartitionCount(partitions: unknown): number {
  if (typeof partitions !== 'number' || !Number.isInteger(partitions) || partitions < 1) {
    throw invalidArgument(`partitions must be a positive integer, got ${show(partitions)}`);
  }
  return partitions;
}

export function checkPartition(partition: unknown, partitions: number): number {
  if (typeof partition !== 'number' || !Number.isInteger(partition) || partition < 0 || partition >= partitions) {
    throw invalidArgument(`partition must be an integer in [0, ${partitions}), got ${show(partition)}`);
  }
  return partition;
}

export function checkOffset(offset: unknown): bigint {
  if (typeof offset !== 'bigint' || offset < 0n) {
    throw invalidArgument(`offset must be a non-negative bigint, got ${show(offset)}`);
  }
  return offset;
}

/**
 * Checks a batch, its records' sizes and its own against the log's limits (`log` names
 * the log and where its limits come from, for the message); an empty batch is allowed
 * (append then writes nothing and resolves []).
 */
export function checkRecords(records: unknown, limits: RecordLimits, log: string): readonly AppendRecord[] {
  if (!Array.isArray(records)) throw invalidArgument(`records must be an array, got ${show(records)}`);
  records.forEach((record: unknown, i) => checkRecord(record, i));
  const batch = records as readonly AppendRecord[];
  batch.forEach((record, i) => {
    const bytes = recordBytes(record);
    if (bytes > limits.maxRecordBytes) throw invalidArgument(`records[${i}] is ${bytes} bytes (key and value), more than the record limit of ${log}: ${limits.maxRecordBytes} bytes`);
  });
  const bytes = appendBytes(batch);
  if (bytes > limits.maxAppendBytes) throw invalidArgument(`the append is ${bytes} bytes (with ${batch.length} records), more than the append limit of ${log}: ${limits.maxAppendBytes} bytes`);
  return batch;
}

function checkRecord(record: unknown, i: number): void {
  if (typeof record !== 'object' || record === null) {
    throw invalidArgument(`records[${i}] must be an object, got ${show(record)}`);
  }
  const { key, value } = record as { key?: unknown; value?: unknown };
  if (typeof key !== 'string' || key.length === 0) {
    throw invalidArgument(`records[${i}].key must be a non-empty string, got ${show(key)}`);
  }
  if (value !== null && !(value instanceof Uint8Array)) {
    throw invalidArgument(`records[${i}].value must be a Uint8Array or null, got ${show(value)}`);
  }
}

export function checkReadOptions(options: ReadOptions | undefined): number {
  const max = options?.maxRecords;
  if (max === undefined) return Number.POSITIVE_INFINITY;
  if (typeof max !== 'number' || !Number.isInteger(max) || max < 0) {
    throw invalidArgument(`maxRecords must be a non-negative integer, got ${show(max)}`);
  }
  return max;
}

export function checkTailOptions(options: TailOptions | undefined): AbortSignal {
  const signal: unknown = options?.signal;
  if (!(signal instanceof AbortSignal)) throw invalidArgument(`tail needs options.signal, an AbortSignal, got ${show(signal)}`);
  return signal;
}
