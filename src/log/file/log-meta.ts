/**
 * log.json, the file log's description: its format, a random log id and the partition
 * count. Each segment's header (segment-header.ts) repeats the log id and partition count,
 * so every partition directory holds a copy of the description:
 *
 * - log.json missing: restored from the segment headers when every partition directory is
 *   there and they all agree (reported, RUNLOG_LOG_REPAIRED); otherwise Corrupt.
 * - log.json damaged (not JSON, empty, missing fields) or disagreeing with the segments
 *   (an edited partition count): Corrupt. A person changed it; runlog does not guess.
 * - log.json of another format (runlog-file-log/1 could not prove its log whole):
 *   InvalidArgument saying the format is not supported.
 *
 * Creation is crash-safe: the description is first written as log.json.creating, then the
 * partition directories with their first segments, then it is renamed to log.json. An
 * open that finds log.json.creating (and no log.json) discards what the creation made
 * (nothing can have been appended) and creates the log again.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, open, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { RunlogError, invalidArgument } from '../../errors.ts';
import { describe } from '../../validation/index.ts';
import { parseSegmentFileName, segmentFileName } from './segment.ts';
import { createSegmentFile, publishSegment } from './segment-file.ts';
import { SEGMENT_HEADER_BYTES, decodeSegmentHeader, type SegmentIdentity } from './segment-header.ts';
import { syncDir } from './sync.ts';

export const META_FILE = 'log.json';
const CREATING_FILE = 'log.json.creating';
const FORMAT = 'runlog-file-log/2';
const FORMAT_FAMILY = 'runlog-file-log/';
const PARTITION_PREFIX = 'partition-';

export interface LogDescription {
  logId: string;
  partitions: number;
}

/** What a directory holds. */
export type FoundLog = { kind: 'log'; description: LogDescription; restored: boolean } | { kind: 'none' } | { kind: 'interrupted' };

export function partitionDir(dir: string, partition: number): string {
  return join(dir, `${PARTITION_PREFIX}${partition}`);
}

export function identityOf({ logId, partitions }: LogDescription, partition: number): SegmentIdentity {
  return { logId, partition, partitions };
}

/** Reads the description of the log in `dir` (an existing directory), restoring it in memory if log.json is missing. */
export async function findLog(dir: string): Promise<FoundLog> {
  const names = await readdir(dir);
  if (names.includes(META_FILE)) return { kind: 'log', description: await readMeta(join(dir, META_FILE)), restored: false };
  if (names.includes(CREATING_FILE)) return { kind: 'interrupted' };
  const partitionNames = names.filter((name) => name.startsWith(PARTITION_PREFIX));
  if (partitionNames.length === 0) return { kind: 'none' };
  return { kind: 'log', description: await describeFromSegments(dir, partitionNames), restored: true };
}

async function readMeta(path: string): Promise<LogDescription> {
  const text = await readFile(path, 'utf8');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new RunlogError(
      'Corrupt',
      `${path} is not a runlog file log description: ${text.trim() === '' ? 'it is empty' : (error as Error).message}`,
    );
  }
  return parseMeta(value, path);
}

function parseMeta(value: unknown, path: string): LogDescription {
  const bad = (what: string): RunlogError => new RunlogError('Corrupt', `${path} is not a runlog file log description: ${what}`);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw bad(`it holds ${describe(value)}`);
  const { format, logId, partitions, ...rest } = value as Record<string, unknown>;
  if (typeof format === 'string' && format !== FORMAT && format.startsWith(FORMAT_FAMILY)) {
    throw invalidArgument(
      `${path}: the file log format ${format} is not supported (this runlog reads ${FORMAT}, whose logs prove themselves whole)`,
    );
  }
  if (format !== FORMAT) throw bad(`format ${describe(format)}`);
  if (typeof logId !== 'string' || !/^[0-9a-f]{32}$/.test(logId)) throw bad(`logId ${describe(logId)} is not 32 hex digits`);
  if (typeof partitions !== 'number' || !Number.isSafeInteger(partitions) || partitions < 1) {
    throw bad(`partitions ${describe(partitions)} is not a positive integer`);
  }
  const extra = Object.keys(rest);
  if (extra.length > 0) throw bad(`unknown field ${describe(extra[0])}`);
  return { logId, partitions };
}

/** The description the first segment of every partition directory carries, if they all agree. */
async function describeFromSegments(dir: string, partitionNames: string[]): Promise<LogDescription> {
  const missing = `${join(dir, META_FILE)} is missing`;
  let found: (LogDescription & { from: string }) | null = null;
  for (const name of partitionNames) {
    const path = join(dir, name);
    const first = (await readdir(path)).flatMap((file) => parseSegmentFileName(file) ?? []).sort((a, b) => (a < b ? -1 : 1))[0];
    if (first === undefined) throw new RunlogError('Corrupt', `${missing}, and ${path} holds no segment to restore it from`);
    const header = await readHeaderOf(join(path, segmentFileName(first)));
    if (name !== `${PARTITION_PREFIX}${header.partition}`)
      throw new RunlogError('Corrupt', `${missing}, and ${path} holds a segment of partition ${header.partition}`);
    found ??= { logId: header.logId, partitions: header.partitions, from: path };
    if (header.logId !== found.logId || header.partitions !== found.partitions) {
      throw new RunlogError(
        'Corrupt',
        `${missing}, and the partitions disagree on what it said: ${found.from} and ${path} belong to different logs`,
      );
    }
  }
  return { logId: found!.logId, partitions: found!.partitions };
}

async function readHeaderOf(path: string): Promise<SegmentIdentity> {
  const handle = await open(path, 'r');
  try {
    const buf = Buffer.alloc(SEGMENT_HEADER_BYTES);
    const { bytesRead } = await handle.read(buf, 0, SEGMENT_HEADER_BYTES, 0);
    return decodeSegmentHeader(buf.subarray(0, bytesRead), path);
  } finally {
    await handle.close();
  }
}

/** Corrupt unless `dir` holds exactly the partition directories 0..partitions-1. */
export async function checkPartitionDirs(dir: string, partitions: number): Promise<void> {
  const names = new Set((await readdir(dir)).filter((name) => name.startsWith(PARTITION_PREFIX)));
  for (let p = 0; p < partitions; p++) {
    if (!names.delete(`${PARTITION_PREFIX}${p}`))
      throw new RunlogError('Corrupt', `${partitionDir(dir, p)} is missing (${META_FILE} says the log has ${partitions} partitions)`);
  }
  const extra = [...names][0];
  if (extra !== undefined)
    throw new RunlogError(
      'Corrupt',
      `${join(dir, extra)} is not a partition of this log (${META_FILE} says it has ${partitions} partitions)`,
    );
}

/** Writes log.json (atomically: a temporary file renamed over it). */
export async function writeMeta(dir: string, description: LogDescription, name = META_FILE): Promise<void> {
  const path = join(dir, name);
  await writeFile(`${path}.tmp`, JSON.stringify({ format: FORMAT, ...description }) + '\n', { flush: true });
  await rename(`${path}.tmp`, path);
  await syncDir(dir);
}

/** Creates a new, empty log of `partitions` partitions in `dir` (see the creation steps above). */
export async function createLog(dir: string, partitions: number): Promise<LogDescription> {
  const description = { logId: randomBytes(16).toString('hex'), partitions };
  await writeMeta(dir, description, CREATING_FILE);
  try {
    for (let p = 0; p < partitions; p++) {
      await mkdir(partitionDir(dir, p));
      const { segment, handle } = await createSegmentFile(partitionDir(dir, p), identityOf(description, p), 0n, true);
      await handle.close();
      await publishSegment(segment, true);
    }
    await syncDir(dir);
    await rename(join(dir, CREATING_FILE), join(dir, META_FILE));
    await syncDir(dir);
    return description;
  } catch (error) {
    await discardCreation(dir).catch(() => undefined); // the creation's own error says more
    throw error;
  }
}

/**
 * Removes what an interrupted creation made: its partition directories (each holding at
 * most a first segment with no record) and log.json.creating. Anything more is Corrupt.
 */
export async function discardCreation(dir: string): Promise<void> {
  const partitionNames = (await readdir(dir)).filter((name) => name.startsWith(PARTITION_PREFIX));
  for (const name of partitionNames) {
    const path = join(dir, name);
    for (const file of await readdir(path)) {
      const size = (await stat(join(path, file))).size;
      if (!file.startsWith(segmentFileName(0n)) || size > SEGMENT_HEADER_BYTES) {
        throw new RunlogError(
          'Corrupt',
          `${join(dir, CREATING_FILE)} says the log's creation was interrupted, but ${join(path, file)} holds more than a new segment`,
        );
      }
    }
  }
  for (const name of partitionNames) await rm(join(dir, name), { recursive: true });
  await rm(join(dir, CREATING_FILE), { force: true });
  await syncDir(dir);
}
