/**
 * A file log opened read-only: the log as it was when opened, for audit and replay tools,
 * also while a writer holds it. It takes no lock and writes nothing. Each segment is read
 * through the handle its scan opened, so a live writer's compaction (which renames and
 * removes segment files) cannot change what this snapshot reads; records the writer
 * appends after the open are not seen. Appends, compaction and tail are refused.
 */
import { RunlogError, invalidArgument } from '../../errors.ts';
import type { EventLog, LogRecord, ReadOptions } from '../event-log.ts';
import { checkOffset, checkPartition, checkReadOptions } from '../log-arguments.ts';
import { FRAME_LIMITS } from './frame.ts';
import { readSegments } from './reader.ts';
import type { Segment } from './segment.ts';
import type { WriterStats } from './writer.ts';

export class ReadOnlyFileLog implements EventLog {
  readonly kind = 'file';
  readonly partitions: number;
  readonly maxRecordBytes = FRAME_LIMITS.maxRecordBytes;
  readonly maxAppendBytes = FRAME_LIMITS.maxAppendBytes;
  readonly #dir: string;
  readonly #segments: (readonly Segment[])[];
  #closing: Promise<void> | null = null;

  constructor(dir: string, segments: (readonly Segment[])[]) {
    this.#dir = dir;
    this.#segments = segments;
    this.partitions = segments.length;
  }

  #partition(partition: number): readonly Segment[] {
    const segments = this.#segments[checkPartition(partition, this.partitions)]!;
    if (this.#closing) throw new RunlogError('Stopped', `the file log in ${this.#dir} is closed`);
    return segments;
  }

  #refuse(what: string): RunlogError {
    return invalidArgument(`the file log in ${this.#dir} is open read-only: ${what} refused`);
  }

  async append(partition: number): Promise<bigint[]> {
    this.#partition(partition);
    throw this.#refuse('append');
  }

  read(partition: number, fromOffset: bigint, options?: ReadOptions): AsyncIterable<LogRecord> {
    const segments = this.#partition(partition);
    checkOffset(fromOffset);
    const end = segments[segments.length - 1]!.nextOffset;
    return readSegments(() => segments, { from: fromOffset, end, maxRecords: checkReadOptions(options) });
  }

  tail(partition: number): AsyncIterable<LogRecord> {
    this.#partition(partition);
    throw this.#refuse('tail (a read-only log is the log as it was when opened; it sees no new records)');
  }

  async endOffset(partition: number): Promise<bigint> {
    const segments = this.#partition(partition);
    return segments[segments.length - 1]!.nextOffset;
  }

  async compact(partition: number): Promise<void> {
    this.#partition(partition);
    throw this.#refuse('compaction');
  }

  stats(): WriterStats {
    return { appends: 0, records: 0, writes: 0, fsyncs: 0, bytes: 0 };
  }

  close(): Promise<void> {
    this.#closing ??= Promise.all(this.#segments.flat().map((segment) => segment.retire())).then(() => undefined);
    return this.#closing;
  }
}
