/**
 * The embedded file log, runlog's default backend. Layout of `dir`:
 *
 *   LOCK                    the writer's pid, for people only (the lock is a flock on dir: lock.ts)
 *   log.json                format, log id and partition count (log-meta.ts)
 *   reached-<n>.json        how far partition n is known to have reached (reached.ts)
 *   partition-<n>/<base>.log  segments, named by base offset (segment.ts, segment-header.ts, frame.ts)
 *   snapshots/partition-<n>/   snapshots of the queue's views, and the compaction horizon (snapshot-store.ts)
 *
 * Appends are group-committed (segment-appender.ts), open proves every partition's structure whole and recovers
 * a torn tail (recovery.ts), compaction rewrites closed segments (compaction.ts), reads
 * stream from disk (reader.ts). `readOnly` opens a snapshot that writes nothing
 * (read-only-log.ts), also while a writer holds the log.
 */
import { mkdir, stat } from 'node:fs/promises';
import { describe, requireBoolean, requireFunction, requireInteger, requirePath } from '../../validation/index.ts';
import { RunlogError, invalidArgument, isRunlogError } from '../../errors.ts';
import { emitProcessWarning, type WarningListener, WarningCounter } from '../../warnings.ts';
import {
  APPEND_BUILT,
  type AppendOptions,
  type AppendRecord,
  type EventLog,
  type LogRecord,
  type ReadOptions,
  type TailOptions,
} from '../event-log.ts';
import {
  checkAppendOptions,
  checkOffset,
  checkPartition,
  checkPartitionCount,
  checkReadOptions,
  checkRecords,
  checkTailOptions,
} from '../log-arguments.ts';
import { tailRecords, type TailSource } from '../tail.ts';
import { FRAME_LIMITS } from './frame.ts';
import { openFailure } from './fs-errors.ts';
import { acquireLock, type DirLock } from './lock.ts';
import { createLog, discardCreation, findLog, identityOf, partitionDir, type LogDescription } from './log-meta.ts';
import { applyRepairs, checkPartitionsAsked, restoreMeta, scanLog } from './log-scan.ts';
import { OpenUndo, removeCreatedDirs } from './open-undo.ts';
import { FilePartition } from './partition.ts';
import { ReachedRecorder, checkReached, readReached } from './reached.ts';
import { openReadOnlyFileLog } from './read-only-log.ts';
import type { WriterStats } from './segment-appender.ts';
import { FileSnapshotStore } from './snapshot-store.ts';

export const DEFAULT_SEGMENT_BYTES = 64 << 20;

/**
 * A new file log's partition count when none is asked for. One process writes every
 * partition of a file log, so partitions buy it nothing but concurrent datasyncs, and they
 * split concurrent appends into more, smaller groups, each its own write and datasync. With
 * one partition one datasync covers every append in flight: on the 2-core bench VM, 64
 * callers' lifecycles went from 4.4 to 64 records per datasync at about a third of the CPU
 * per lifecycle, and ran about twice as fast as over 8 partitions.
 */
export const DEFAULT_FILE_PARTITIONS = 1;

export interface FileLogOptions {
  dir: string;
  /** Default: the count the log was created with, or DEFAULT_FILE_PARTITIONS for a new log. */
  partitions?: number;
  /** datasync every group commit (default true). Off, a machine crash may lose acknowledged appends. */
  fsync?: boolean;
  /** A segment rolls before a write would take it past this size (default 64 MiB). */
  segmentBytes?: number;
  /**
   * Opens the log as it is now, to read only: no lock is taken (a writer may hold the log),
   * nothing is created, repaired or written; a torn tail is reported and not read; appends,
   * compaction and tail are refused. A log that does not exist is InvalidArgument.
   */
  readOnly?: boolean;
  /** Told about repairs made on open (a torn tail cut, a LOCK file left by a writer that died). Default: process.emitWarning. */
  onWarning?: WarningListener;
}

/** Counters over all partitions since open, for tests and benchmarks. */
export type FileLogStats = WriterStats;

export interface FileLog extends EventLog {
  readonly kind: 'file';
  stats(): FileLogStats;
}

interface Settings {
  dir: string;
  fsync: boolean;
  segmentBytes: number;
  partitions: number | undefined;
  readOnly: boolean;
  onWarning: WarningListener;
}

function checkOptions(options: FileLogOptions): Settings {
  const { dir, fsync = true, segmentBytes = DEFAULT_SEGMENT_BYTES, readOnly = false, onWarning = emitProcessWarning } = options;
  return {
    dir: requirePath('dir', dir),
    fsync: requireBoolean('fsync', fsync),
    readOnly: requireBoolean('readOnly', readOnly),
    // Guarded: a listener that throws or rejects must not break the open that reports.
    onWarning: new WarningCounter(requireFunction<WarningListener>('onWarning', onWarning)).report,
    segmentBytes: requireInteger('segmentBytes', segmentBytes, 1),
    partitions: options.partitions === undefined ? undefined : checkPartitionCount(options.partitions, 'file'),
  };
}

/**
 * Opens (creating if need be) the file log in `options.dir`. Whatever fails is a
 * RunlogError naming the path: Corrupt for damaged or missing pieces, InvalidArgument for
 * a `dir` that is no directory (or, read-only, holds no log), LogUnavailable for the file
 * system refusing (EACCES, EROFS, EMFILE, ...).
 */
export async function openFileLog(options: FileLogOptions): Promise<FileLog> {
  const settings = checkOptions(options);
  try {
    return settings.readOnly ? await openReadOnlyFileLog(settings) : await openWritable(settings);
  } catch (error) {
    throw openFailure(settings.dir, error);
  }
}

/**
 * A writable open holds the directory's lock (lock.ts). One that fails leaves the directory
 * as it found it, but for repairs (a torn tail cut, an interrupted roll finished): LOCK is
 * removed, a log it was creating is removed again (open-undo.ts), and so is the directory if
 * it made it.
 */
async function openWritable(s: Settings): Promise<FileLog> {
  const createdDir = await ensureDirectory(s.dir);
  let lock: DirLock;
  try {
    lock = await acquireLock(s.dir, s.onWarning);
  } catch (error) {
    if (!isRunlogError(error, 'Locked')) await removeCreatedDirs(s.dir, createdDir);
    throw error;
  }
  const creation: Creation = { undo: null };
  try {
    return await openLocked(s, lock, creation);
  } catch (error) {
    const undoing = await creation.undo?.undo().then(
      () => null,
      (failure: unknown) => failure,
    );
    await lock.release();
    await removeCreatedDirs(s.dir, createdDir);
    if (undoing)
      throw new RunlogError(
        'LogUnavailable',
        `${openFailure(s.dir, error).message}; removing the log it was creating failed too: ${String(undoing)}`,
        { cause: error },
      );
    throw error;
  }
}

/** Set once an open starts creating the log: what to remove if it fails. */
interface Creation {
  undo: OpenUndo | null;
}

/** The open, once this process holds the lock. */
async function openLocked(s: Settings, lock: DirLock, creation: Creation): Promise<FileLog> {
  const { description, restored } = await describeOrCreate(s, creation);
  // Scan everything first: a corrupt partition fails the open before any repair is written.
  const reached = await readReached(s.dir, description);
  const scans = await scanLog(s.dir, description, { readOnly: false }, reached);
  await checkReached(s.dir, reached, scans);
  await applyRepairs(s.dir, scans, s.onWarning);
  if (restored) await restoreMeta(s.dir, description, s.onWarning);
  const stats: WriterStats = { appends: 0, records: 0, writes: 0, fsyncs: 0, bytes: 0 };
  const options = { fsync: s.fsync, segmentBytes: s.segmentBytes, stats, checkLock: () => lock.check() };
  const parts = await openAll(
    scans.map((scan, p) => FilePartition.open(partitionDir(s.dir, p), identityOf(description, p), scan.segments, options)),
  );
  // With fsync off no end is known durable, so none is recorded (reached.ts).
  const recorders = s.fsync
    ? parts.map((part, p) => new ReachedRecorder(s.dir, description.logId, p, reached[p]!, part, s.onWarning, () => lock.check()))
    : [];
  const snapshots = new FileSnapshotStore(s.dir, description.logId, s.fsync, () => lock.check());
  for (const [p, part] of parts.entries()) part.compacting = (horizon) => snapshots.compacting(p, horizon);
  return new FileLogImpl(s.dir, parts, lock, stats, recorders, snapshots);
}

/** Makes `dir` if missing; answers the topmost directory it made (see removeCreatedDirs), if any. */
async function ensureDirectory(dir: string): Promise<string | undefined> {
  try {
    if (!(await stat(dir)).isDirectory()) throw invalidArgument(`dir ${describe(dir)} is not a directory`);
    return undefined;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    return mkdir(dir, { recursive: true });
  }
}

/** The log in `dir`, or a new one (see log-meta.ts for an interrupted creation). */
async function describeOrCreate(s: Settings, creation: Creation): Promise<{ description: LogDescription; restored: boolean }> {
  let found = await findLog(s.dir);
  if (found.kind === 'interrupted') {
    s.onWarning({ code: 'RUNLOG_LOG_REPAIRED', message: `${s.dir}: discarding what an interrupted creation of the log left` });
    await discardCreation(s.dir);
    found = { kind: 'none' };
  }
  if (found.kind === 'none') {
    creation.undo = await OpenUndo.note(s.dir);
    return { description: await createLog(s.dir, s.partitions ?? DEFAULT_FILE_PARTITIONS), restored: false };
  }
  checkPartitionsAsked(s.dir, found.description, s.partitions);
  return found;
}

/** All the partitions, or none: if one fails to open, those that did are closed again. */
async function openAll(opening: Promise<FilePartition>[]): Promise<FilePartition[]> {
  const results = await Promise.allSettled(opening);
  const failed = results.find((r) => r.status === 'rejected');
  if (failed === undefined) return results.map((r) => (r as PromiseFulfilledResult<FilePartition>).value);
  await Promise.all(results.map((r) => (r.status === 'fulfilled' ? r.value.close() : undefined)));
  throw failed.reason;
}

class FileLogImpl implements FileLog {
  readonly kind = 'file';
  readonly partitions: number;
  /** A frame's limit (its reader refuses bigger ones as corrupt), less the frame's overheads. */
  readonly maxRecordBytes = FRAME_LIMITS.maxRecordBytes;
  readonly maxAppendBytes = FRAME_LIMITS.maxAppendBytes;
  readonly #dir: string;
  /** "the file log in <dir>", for messages. */
  readonly #where: string;
  readonly #parts: FilePartition[];
  readonly #lock: DirLock;
  readonly #stats: WriterStats;
  readonly #recorders: ReachedRecorder[];
  #closing: Promise<void> | null = null;

  constructor(
    dir: string,
    parts: FilePartition[],
    lock: DirLock,
    stats: WriterStats,
    recorders: ReachedRecorder[],
    readonly snapshots: FileSnapshotStore,
  ) {
    this.#dir = dir;
    this.#where = `the file log in ${dir}`;
    this.#parts = parts;
    this.partitions = parts.length;
    this.#lock = lock;
    this.#stats = stats;
    this.#recorders = recorders;
  }

  #partition(partition: number): FilePartition {
    const part = this.#parts[checkPartition(partition, this.partitions)]!;
    if (this.#closing) throw new RunlogError('Stopped', `the file log in ${this.#dir} is closed`);
    return part;
  }

  /** Not an async function: the appender's promise is handed on as is (an async wrapper costs every append two more microtask turns). */
  append(partition: number, records: readonly AppendRecord[], options?: AppendOptions): Promise<bigint[]> {
    try {
      const part = this.#partition(partition);
      checkAppendOptions(options, false, this.#where);
      const checked = checkRecords(records, this, this.#where);
      return checked.length === 0 ? Promise.resolve([]) : part.appender.append(checked);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** The queue's records, which it built and checked itself (event-log.ts: APPEND_BUILT). */
  [APPEND_BUILT](partition: number, records: readonly AppendRecord[]): Promise<bigint[]> {
    try {
      const part = this.#partition(partition);
      return records.length === 0 ? Promise.resolve([]) : part.appender.append(records);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  read(partition: number, fromOffset: bigint, options?: ReadOptions): AsyncIterable<LogRecord> {
    const part = this.#partition(partition);
    checkOffset(fromOffset);
    return part.read(fromOffset, checkReadOptions(options));
  }

  tail(partition: number, fromOffset: bigint, options: TailOptions): AsyncIterable<LogRecord> {
    const part = this.#partition(partition);
    checkOffset(fromOffset);
    const signal = checkTailOptions(options);
    const source: TailSource = {
      endOffset: () => part.endOffset,
      read: (from) => part.read(from, Number.POSITIVE_INFINITY),
      appended: (offset, signal) => part.appended(offset, signal),
      closed: () => this.#closing !== null,
    };
    return tailRecords(source, fromOffset, signal);
  }

  async endOffset(partition: number): Promise<bigint> {
    return this.#partition(partition).endOffset;
  }

  async compact(partition: number): Promise<void> {
    await this.#partition(partition).compact();
  }

  stats(): FileLogStats {
    return { ...this.#stats };
  }

  close(): Promise<void> {
    this.#closing ??= (async () => {
      await Promise.all(this.#parts.map((part) => part.close()));
      // Every append is durable now: record each partition's end, and where a clean close left
      // its active segment (recovery.ts: CLEAN CLOSE). A failure is only a warning.
      await Promise.all(this.#recorders.map((recorder, p) => recorder.close(this.#parts[p]!.cleanClose())));
      await this.#lock.release();
    })();
    return this.#closing;
  }
}
