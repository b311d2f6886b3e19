/**
 * Argument checks every EventLog backend applies before it touches anything, so that a
 * bad call is `InvalidArgument` (naming the value) and writes nothing, whatever the backend.
 */
import {
  describe,
  isUint8Array,
  isWellFormed,
  readArray,
  requireInteger,
  requireName,
  requireObject,
  requireSignal,
} from '../validation/index.ts';
import { invalidArgument, isRunlogError } from '../errors.ts';
import {
  RECORD_OVERHEAD_BYTES,
  recordBytes,
  type AppendOptions,
  type AppendRecord,
  type ConsumedOffset,
  type EventLog,
  type ReadOptions,
  type RecordLimits,
  type TailOptions,
} from './event-log.ts';

/** The log argument of a function that takes an opened EventLog (openRunQueueOnLog, replayPartition). */
export function checkEventLog(log: unknown): EventLog {
  let ok: boolean;
  try {
    const candidate = log as Partial<EventLog> | null | undefined;
    ok =
      typeof candidate?.read === 'function' &&
      typeof candidate.append === 'function' &&
      Number.isSafeInteger(candidate.partitions) &&
      candidate.partitions! >= 1;
  } catch {
    ok = false;
  }
  if (!ok) throw invalidArgument(`log must be an opened EventLog, got ${describe(log)}`);
  return log as EventLog;
}

/**
 * The most partitions each backend serves, checked before anything is written:
 *   memory  1024: a partition is a few arrays and a RunQueue view; beyond that, sweeps and
 *           takes that visit every partition slow down for nothing (one process serves all).
 *   file    256: one process writes every partition, each holding at least two descriptors
 *           (its active segment's writer, and a reader per segment read), so 256 partitions
 *           take 512 of the 1024 descriptors many systems allow; more buy a file log nothing
 *           but more, smaller datasyncs (its default is 1).
 *   kafka   256: each partition is written by two transactional producers, each with its own
 *           broker connections, and a RunQueue claims every partition when it opens.
 */
export const MAX_PARTITIONS = { memory: 1024, file: 256, kafka: 256 } as const;

/** A partition count: a positive integer, at most the backend's maximum when a backend is named. */
export function checkPartitionCount(partitions: unknown, backend?: keyof typeof MAX_PARTITIONS): number {
  const max = backend === undefined ? Number.MAX_SAFE_INTEGER : MAX_PARTITIONS[backend];
  if (typeof partitions !== 'number' || !Number.isSafeInteger(partitions) || partitions < 1 || partitions > max) {
    const range = backend === undefined ? 'a positive integer' : `an integer from 1 to ${max} (the most a ${backend} log serves)`;
    throw invalidArgument(`partitions must be ${range}, got ${describe(partitions)}`);
  }
  return partitions;
}

export function checkPartition(partition: unknown, partitions: number): number {
  return requireInteger('partition', partition, 0, partitions - 1);
}

export function checkOffset(offset: unknown): bigint {
  if (typeof offset !== 'bigint' || offset < 0n) {
    throw invalidArgument(`offset must be a non-negative bigint, got ${describe(offset)}`);
  }
  return offset;
}

/**
 * Checks a batch, its records' sizes and its own against the log's limits (`log` names
 * the log and where its limits come from, for the message); an empty batch is allowed
 * (append then writes nothing and resolves []). Answers the records read once, as copies:
 * the backend appends those, never what a getter might answer next.
 */
export function checkRecords(records: unknown, limits: RecordLimits, log: string): readonly AppendRecord[] {
  // The array read once into a copy, each record then replaced in it by its own checked copy (one array, not two).
  const batch = readArray('records', records) as AppendRecord[];
  for (let i = 0; i < batch.length; i++) batch[i] = checkRecord(batch[i], i);
  let total = 0;
  for (let i = 0; i < batch.length; i++) {
    const bytes = recordBytes(batch[i]!);
    if (bytes > limits.maxRecordBytes)
      throw invalidArgument(
        `records[${i}] is ${bytes} bytes (key and value), more than the record limit of ${log}: ${limits.maxRecordBytes} bytes`,
      );
    total += bytes + RECORD_OVERHEAD_BYTES;
  }
  if (total > limits.maxAppendBytes)
    throw invalidArgument(
      `the append is ${total} bytes (with ${batch.length} records), more than the append limit of ${log}: ${limits.maxAppendBytes} bytes`,
    );
  return batch;
}

const RECORD_KEYS = ['key', 'value'] as const;
/** What checkRecord names a record while it is read; a refusal names it by its index instead. */
const A_RECORD = 'records[]';

/**
 * A record read once into a copy: a plain object of a well-formed key and bytes or null. Its
 * name ("records[3]") is made only for a refusal: an append of 1,000 records makes none.
 */
function checkRecord(record: unknown, i: number): AppendRecord {
  let body: Partial<Record<(typeof RECORD_KEYS)[number], unknown>>;
  try {
    body = requireObject(A_RECORD, record, RECORD_KEYS);
  } catch (error) {
    if (!isRunlogError(error, 'InvalidArgument') || !error.message.startsWith(A_RECORD)) throw error;
    throw invalidArgument(`records[${i}]${error.message.slice(A_RECORD.length)}`);
  }
  const { key, value } = body;
  if (typeof key !== 'string' || key.length === 0 || !isWellFormed(key)) {
    throw invalidArgument(`records[${i}].key must be a non-empty string of well-formed text, got ${describe(key)}`);
  }
  if (value !== null && !isUint8Array(value)) {
    throw invalidArgument(`records[${i}].value must be a Uint8Array or null, got ${describe(value)}`);
  }
  return { key, value };
}

/**
 * An append's options: a plain object of known keys; `consumed` (group and topic non-empty
 * strings, partition a non-negative integer, offset a non-negative bigint) only where the
 * backend commits consumed offsets (`canCommit`, else InvalidArgument naming the backend).
 */
export function checkAppendOptions(options: AppendOptions | undefined, canCommit: boolean, log: string): ConsumedOffset | null {
  if (options === undefined) return null;
  const body = requireObject('append options', options, ['consumed']);
  if (body.consumed === undefined) return null;
  if (!canCommit) {
    throw invalidArgument(
      `${log} cannot commit consumed offsets with an append (only the Kafka log can), got consumed ${describe(body.consumed)}`,
    );
  }
  return checkConsumed(body.consumed);
}

/** A ConsumedOffset: group and topic names, partition a non-negative integer, offset a non-negative bigint. */
export function checkConsumed(value: unknown): ConsumedOffset {
  const consumed = requireObject('consumed', value, ['group', 'topic', 'partition', 'offset']);
  const offset = consumed.offset;
  if (typeof offset !== 'bigint' || offset < 0n)
    throw invalidArgument(`consumed.offset must be a non-negative bigint, got ${describe(offset)}`);
  return {
    group: requireName('consumed.group', consumed.group),
    topic: requireName('consumed.topic', consumed.topic),
    partition: requireInteger('consumed.partition', consumed.partition, 0, 1_000_000),
    offset,
  };
}

export function checkReadOptions(options: ReadOptions | undefined): number {
  const max = options === undefined ? undefined : requireObject('read options', options, ['maxRecords']).maxRecords;
  if (max === undefined) return Number.POSITIVE_INFINITY;
  if (typeof max !== 'number' || !Number.isInteger(max) || max < 0) {
    throw invalidArgument(`maxRecords must be a non-negative integer, got ${describe(max)}`);
  }
  return max;
}

export function checkTailOptions(options: TailOptions | undefined): AbortSignal {
  return requireSignal('tail options.signal', requireObject('tail options', options, ['signal']).signal);
}
