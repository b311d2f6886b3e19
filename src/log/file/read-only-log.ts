/**
 * A file log opened read-only: the log as it was when opened, for audit and replay tools,
 * also while a writer holds it. It takes no lock and writes nothing. Each segment is read
 * through the handle its scan opened, so a live writer's compaction (which renames and
 * removes segment files) cannot change what this snapshot reads; records the writer
 * appends after the open are not seen. Appends, compaction and tail are refused. Its
 * snapshots can be listed and read (runlog verify compares them with the replay), not saved.
 */
import { stat } from 'node:fs/promises';
import { RunlogError, invalidArgument } from '../../errors.ts';
import { retry } from '../../retry.ts';
import { describe } from '../../validation/index.ts';
import type { WarningListener } from '../../warnings.ts';
import type { EventLog, LogRecord, ReadOptions } from '../event-log.ts';
import type { SnapshotStore } from '../snapshot-store.ts';
import { checkOffset, checkPartition, checkReadOptions } from '../log-arguments.ts';
import { FRAME_LIMITS } from './frame.ts';
import { META_FILE, findLog } from './log-meta.ts';
import { checkPartitionsAsked, scanLog, warningOf } from './log-scan.ts';
import { checkReached, readReached } from './reached.ts';
import { readSegments } from './reader.ts';
import type { Segment } from './segment.ts';
import { FileSnapshotStore } from './snapshot-store.ts';
import type { WriterStats } from './segment-appender.ts';

/**
 * A read-only open takes no lock, so a live writer may roll or compact while it scans: a
 * scan that finds the log inconsistent (Corrupt) or a file gone is tried again, a few times, after
 * short pauses (src/retry.ts).
 */
const READ_ONLY_TRIES = 5;

/** What a read-only open is told (FileLogOptions, checked). */
export interface ReadOnlyOpen {
  dir: string;
  partitions: number | undefined;
  onWarning: WarningListener;
}

/** Opens the log in `s.dir` read-only (FileLogOptions.readOnly). */
export async function openReadOnlyFileLog(s: ReadOnlyOpen): Promise<ReadOnlyFileLog> {
  try {
    if (!(await stat(s.dir)).isDirectory()) throw invalidArgument(`dir ${describe(s.dir)} is not a directory`);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw invalidArgument(`${s.dir} holds no runlog file log: it does not exist`);
    throw error;
  }
  const moving = (error: unknown): boolean =>
    (error instanceof RunlogError && error.code === 'Corrupt') || (error as NodeJS.ErrnoException).code === 'ENOENT';
  return retry(() => snapshot(s), { firstMs: 1, maxMs: 20, tries: READ_ONLY_TRIES, retriable: moving });
}

async function snapshot(s: ReadOnlyOpen): Promise<ReadOnlyFileLog> {
  const found = await findLog(s.dir);
  if (found.kind !== 'log') {
    throw invalidArgument(
      `${s.dir} holds no runlog file log${found.kind === 'interrupted' ? ' (its creation was interrupted)' : ` (no ${META_FILE})`}`,
    );
  }
  checkPartitionsAsked(s.dir, found.description, s.partitions);
  // The records first: a live writer records only ends already in the segments scanned after.
  const reached = await readReached(s.dir, found.description);
  const scans = await scanLog(s.dir, found.description, { readOnly: true }, reached);
  await checkReached(s.dir, reached, scans);
  if (found.restored)
    s.onWarning({
      code: 'RUNLOG_LOG_REPAIRED',
      message: `${s.dir}: ${META_FILE} is missing; read from the partitions' segment headers (not restored: opened read-only)`,
    });
  for (const repair of scans.flatMap((scan) => scan.repairs)) {
    const { code, message } = warningOf(repair);
    const inFlight = code === 'RUNLOG_TORN_TAIL' ? ' (if a writer holds the log, this may be its append in flight)' : '';
    s.onWarning({ code, message: `${message} — not done: opened read-only, the bytes are left as they are and not read${inFlight}` });
  }
  return new ReadOnlyFileLog(
    s.dir,
    scans.map((scan) => scan.segments),
    found.description.logId,
  );
}

export class ReadOnlyFileLog implements EventLog {
  readonly kind = 'file';
  readonly partitions: number;
  readonly maxRecordBytes = FRAME_LIMITS.maxRecordBytes;
  readonly maxAppendBytes = FRAME_LIMITS.maxAppendBytes;
  readonly #dir: string;
  readonly #segments: (readonly Segment[])[];
  readonly snapshots: SnapshotStore;
  #closing: Promise<void> | null = null;

  constructor(dir: string, segments: (readonly Segment[])[], logId: string) {
    this.#dir = dir;
    this.#segments = segments;
    this.partitions = segments.length;
    const store = new FileSnapshotStore(dir, logId, false, () => {
      throw this.#refuse('writing in the snapshots directory'); // no lock: never (save is refused below, before the store)
    });
    this.snapshots = {
      logId: store.logId,
      list: async (partition) => store.list(checkPartition(partition, this.partitions)),
      staleness: async (partition) => store.staleness(checkPartition(partition, this.partitions)),
      save: async () => {
        throw this.#refuse('saving a snapshot');
      },
    };
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
    const end = segments[segments.length - 1]!.endOffset;
    return readSegments(() => segments, { from: fromOffset, end, maxRecords: checkReadOptions(options) });
  }

  tail(partition: number): AsyncIterable<LogRecord> {
    this.#partition(partition);
    throw this.#refuse('tail (a read-only log is the log as it was when opened; it sees no new records)');
  }

  async endOffset(partition: number): Promise<bigint> {
    const segments = this.#partition(partition);
    return segments[segments.length - 1]!.endOffset;
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
