/**
 * The embedded file log, runlog's default backend. Layout of `dir`:
 *
 *   LOCK                    pid of the one process that has it open (lock.ts)
 *   log.json                format and partition count, written on first open
 *   partition-<n>/<base>.log  segments, named by base offset (segment.ts, frame.ts)
 *
 * Appends are group-committed (writer.ts), open recovers a torn tail (recovery.ts),
 * compaction rewrites closed segments (compaction.ts), reads stream from disk (reader.ts).
 */
import { mkdir, open, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { RunlogError, invalidArgument } from '../../errors.ts';
import type { AppendRecord, EventLog, LogRecord, ReadOptions, TailOptions } from '../event-log.ts';
import {
  checkOffset,
  checkPartition,
  checkPartitionCount,
  checkReadOptions,
  checkRecords,
  checkTailOptions,
} from '../log-arguments.ts';
import { emitProcessWarning, type WarningListener } from '../../warnings.ts';
import { FRAME_LIMITS } from './frame.ts';
import { acquireLock, type DirLock } from './lock.ts';
import { FilePartition } from './partition.ts';
import { scanPartition, type PartitionScan, type Repair } from './recovery.ts';
import { syncDir } from './sync.ts';
import type { WriterStats } from './writer.ts';

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
  /** Told about repairs made on open (a torn tail cut, a stale lock taken over). Default: process.emitWarning. */
  onWarning?: WarningListener;
}

/** Counters over all partitions since open, for tests and benchmarks. */
export type FileLogStats = WriterStats;

export interface FileLog extends EventLog {
  readonly kind: 'file';
  stats(): FileLogStats;
}

const META_FILE = 'log.json';
const FORMAT = 'runlog-file-log/1';

function partitionDir(dir: string, partition: number): string {
  return join(dir, `partition-${partition}`);
}

async function readMeta(dir: string): Promise<{ partitions: number } | null> {
  try {
    const meta = JSON.parse(await readFile(join(dir, META_FILE), 'utf8')) as { format?: unknown; partitions?: unknown };
    if (meta.format !== FORMAT || typeof meta.partitions !== 'number') {
      throw new RunlogError('Corrupt', `${join(dir, META_FILE)} is not a runlog file log description`);
    }
    return { partitions: meta.partitions };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}

async function writeMeta(dir: string, partitions: number): Promise<void> {
  const path = join(dir, META_FILE);
  await writeFile(`${path}.tmp`, JSON.stringify({ format: FORMAT, partitions }) + '\n', { flush: true });
  await rename(`${path}.tmp`, path);
  await syncDir(dir);
}

async function applyRepair(repair: Repair, onWarning: WarningListener): Promise<void> {
  onWarning({ code: repair.kind === 'truncate' ? 'RUNLOG_TORN_TAIL' : 'RUNLOG_LOG_REPAIRED', message: repair.message });
  if (repair.kind === 'remove') return rm(repair.path, { force: true });
  const handle = await open(repair.path, 'r+');
  try {
    await handle.truncate(repair.size);
    await handle.sync();
  } finally {
    await handle.close();
  }
}

function checkOptions(options: FileLogOptions): Required<Omit<FileLogOptions, 'onWarning' | 'partitions'>> & { partitions: number | undefined } {
  const { dir, fsync = true, segmentBytes = DEFAULT_SEGMENT_BYTES } = options;
  if (typeof dir !== 'string' || dir.length === 0) throw invalidArgument(`dir must be a non-empty path, got ${String(dir)}`);
  if (typeof fsync !== 'boolean') throw invalidArgument(`fsync must be a boolean, got ${String(fsync)}`);
  if (!Number.isInteger(segmentBytes) || segmentBytes < 1) {
    throw invalidArgument(`segmentBytes must be a positive integer, got ${String(segmentBytes)}`);
  }
  const partitions = options.partitions === undefined ? undefined : checkPartitionCount(options.partitions);
  return { dir, fsync, segmentBytes, partitions };
}

export async function openFileLog(options: FileLogOptions): Promise<FileLog> {
  const { dir, fsync, segmentBytes, partitions: requested } = checkOptions(options);
  const onWarning = options.onWarning ?? emitProcessWarning;
  await mkdir(dir, { recursive: true });
  const meta = await readMeta(dir);
  const partitions = requested ?? meta?.partitions ?? DEFAULT_FILE_PARTITIONS;
  if (meta !== null && meta.partitions !== partitions) {
    throw invalidArgument(`${dir} holds a log of ${meta.partitions} partitions, not ${partitions}`);
  }
  const lock = await acquireLock(dir, onWarning);
  try {
    // Scan everything first: a corrupt partition fails the open before any repair is written.
    const scans: PartitionScan[] = [];
    for (let p = 0; p < partitions; p++) scans.push(await scanPartition(partitionDir(dir, p)));
    for (const repair of scans.flatMap((scan) => scan.repairs)) await applyRepair(repair, onWarning);
    if (scans.some((scan) => scan.repairs.length > 0)) await Promise.all(scans.map((_, p) => syncDirIfExists(partitionDir(dir, p))));
    if (meta === null) await writeMeta(dir, partitions);
    const stats: WriterStats = { appends: 0, records: 0, writes: 0, fsyncs: 0, bytes: 0 };
    const parts = await openAll(scans.map((scan, p) => FilePartition.open(partitionDir(dir, p), scan.segments, { fsync, segmentBytes, stats })));
    if (meta === null) await syncDir(dir);
    return new FileLogImpl(dir, parts, lock, stats);
  } catch (error) {
    await lock.release();
    throw error;
  }
}

/** All the partitions, or none: if one fails to open, those that did are closed again. */
async function openAll(opening: Promise<FilePartition>[]): Promise<FilePartition[]> {
  const results = await Promise.allSettled(opening);
  const failed = results.find((r) => r.status === 'rejected');
  if (failed === undefined) return results.map((r) => (r as PromiseFulfilledResult<FilePartition>).value);
  await Promise.all(results.map((r) => (r.status === 'fulfilled' ? r.value.close() : undefined)));
  throw failed.reason;
}

async function syncDirIfExists(dir: string): Promise<void> {
  try {
    await syncDir(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
}

class FileLogImpl implements FileLog {
  readonly kind = 'file';
  readonly partitions: number;
  /** A frame's limit (its reader refuses bigger ones as corrupt), less the frame's overheads. */
  readonly maxRecordBytes = FRAME_LIMITS.maxRecordBytes;
  readonly maxAppendBytes = FRAME_LIMITS.maxAppendBytes;
  readonly #dir: string;
  readonly #parts: FilePartition[];
  readonly #lock: DirLock;
  readonly #stats: WriterStats;
  #closing: Promise<void> | null = null;

  constructor(dir: string, parts: FilePartition[], lock: DirLock, stats: WriterStats) {
    this.#dir = dir;
    this.#parts = parts;
    this.partitions = parts.length;
    this.#lock = lock;
    this.#stats = stats;
  }

  #partition(partition: number): FilePartition {
    const part = this.#parts[checkPartition(partition, this.partitions)]!;
    if (this.#closing) throw new RunlogError('Stopped', `the file log in ${this.#dir} is closed`);
    return part;
  }

  async append(partition: number, records: readonly AppendRecord[]): Promise<bigint[]> {
    const part = this.#partition(partition);
    if (checkRecords(records, this, `the file log in ${this.#dir}`).length === 0) return [];
    return part.writer.append(records);
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
    const closed = (): boolean => this.#closing !== null;
    return (async function* () {
      let next = fromOffset;
      while (!signal.aborted && !closed()) {
        const end = part.endOffset; // part.read stops here too
        for await (const record of part.read(next, Number.POSITIVE_INFINITY)) {
          if (signal.aborted) return;
          next = record.offset + 1n;
          yield record;
        }
        if (end > next) next = end; // skip holes left by compaction
        await part.appended(next, signal);
      }
    })();
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
      await this.#lock.release();
    })();
    return this.#closing;
  }
}
