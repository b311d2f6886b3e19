/**
 * Recovery: what open() does to a partition directory before anything is written.
 *
 * Every frame of every segment is read and CRC-checked. Since one group-commit write is
 * one frame and each write is made durable before the next begins, a crash can damage
 * only the last frame of the last segment (a torn tail: cut short, garbage, or zeros where
 * the file system extended the file but never got the data). That tail is cut. Damage
 * anywhere else — or a damaged frame followed by a valid one, which a torn write cannot
 * produce — is corruption: open fails with `Corrupt`, naming the file and byte.
 *
 * Scanning only plans repairs; the caller applies them once every partition has scanned
 * cleanly, so a failed open writes nothing. Repairs are: cutting a torn tail, removing
 * the temporary file of an interrupted compaction, and removing input segments that an
 * interrupted compaction had already merged into its output (see compaction.ts: such a
 * segment's base lies at or below a record of an earlier segment).
 */
import { open, readdir, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { RunlogError } from '../../errors.ts';
import { FRAME_MAGIC, checkFrame, lastOffsetOfFrame } from './frame.ts';
import { readFrames } from './frame-reader.ts';
import { Segment, parseSegmentFileName } from './segment.ts';

export const COMPACTING_SUFFIX = '.compacting';

export type Repair =
  | { kind: 'truncate'; path: string; size: number; message: string }
  | { kind: 'remove'; path: string; message: string };

export interface PartitionScan {
  segments: Segment[];
  repairs: Repair[];
}

function corrupt(path: string, filePos: number, reason: string): RunlogError {
  return new RunlogError('Corrupt', `${path}: bad frame at byte ${filePos}: ${reason}`);
}

async function listDir(dir: string): Promise<string[]> {
  try {
    return await readdir(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
}

/** Scans a partition directory (missing: an empty partition). */
export async function scanPartition(dir: string): Promise<PartitionScan> {
  const names = await listDir(dir);
  const repairs: Repair[] = names
    .filter((name) => name.endsWith(COMPACTING_SUFFIX))
    .map((name) => ({ kind: 'remove', path: join(dir, name), message: `removing ${join(dir, name)}, left by an interrupted compaction` }));
  const bases = names.flatMap((name) => parseSegmentFileName(name) ?? []).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const segments: Segment[] = [];
  for (const [i, base] of bases.entries()) {
    const segment = new Segment(dir, base);
    const previous = segments.at(-1);
    if (previous?.lastOffset != null && base <= previous.lastOffset) {
      repairs.push({ kind: 'remove', path: segment.path, message: `removing ${segment.path}, already merged by an interrupted compaction` });
      continue;
    }
    const torn = await scanSegment(segment, i === bases.length - 1);
    if (torn) repairs.push(torn);
    segments.push(segment);
  }
  return { segments, repairs };
}

/** Fills `segment`'s index from its file; returns the repair for a torn tail, if any. */
async function scanSegment(segment: Segment, isLast: boolean): Promise<Repair | null> {
  const handle = await open(segment.path, 'r');
  try {
    const { size } = await handle.stat();
    const frames = readFrames(handle, 0, size, undefined, true); // frames are checked, never kept
    let step = await frames.next();
    for (; !step.done; step = await frames.next()) {
      const { buf, pos, end, filePos, base } = step.value;
      const last = lastOffsetOfFrame(buf, pos, end);
      if (last === null) throw corrupt(segment.path, filePos, 'inconsistent record structure');
      if (base < segment.base || (segment.lastOffset !== null && base <= segment.lastOffset)) {
        throw corrupt(segment.path, filePos, `offset ${base} out of order`);
      }
      segment.addFrame(filePos, filePos + (end - pos), base, last);
    }
    const ending = step.value;
    if (ending.kind === 'end') return null;
    const reason = ending.kind === 'bad' ? ending.reason : 'incomplete frame';
    if (!isLast || (await validFrameAfter(handle, ending.filePos, size))) throw corrupt(segment.path, ending.filePos, reason);
    const message = `${segment.path}: cutting a torn tail of ${size - ending.filePos} bytes at byte ${ending.filePos} (${reason})`;
    return { kind: 'truncate', path: segment.path, size: ending.filePos, message };
  } finally {
    await handle.close();
  }
}

/** Whether a whole, CRC-valid frame starts anywhere in the file after `from`. */
async function validFrameAfter(handle: FileHandle, from: number, size: number): Promise<boolean> {
  const rest = Buffer.alloc(size - from);
  await handle.read(rest, 0, rest.length, from);
  const magic = Buffer.alloc(4);
  magic.writeUInt32LE(FRAME_MAGIC);
  for (let at = rest.indexOf(magic, 1); at >= 0; at = rest.indexOf(magic, at + 1)) {
    if (checkFrame(rest, at, rest.length).kind === 'frame') return true;
  }
  return false;
}
