/**
 * Making segment files. A new segment is written as `<name>.new` (header only) and
 * renamed into place once whole, so a segment file never exists without its header. A roll
 * goes, crash-safe at every step (recovery.ts finishes or undoes each):
 *
 *   1. write `<next>.log.new`: the new segment's header          crash: .new removed
 *   2. append the seal (end = next base) to the active segment     crash: torn seal cut, .new removed
 *   3. rename `<next>.log.new` to `<next>.log`, fsync the dir        crash: rename done on open
 *
 * The seal comes before the new file is in place, so a sealed last segment is never
 * ambiguous: either its successor is pending as `.new` (a roll to finish) or it was lost.
 */
import { open, rename, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import { encodeSeal } from './frame.ts';
import { Segment } from './segment.ts';
import { encodeSegmentHeader, type SegmentIdentity } from './segment-header.ts';
import { syncDir } from './sync.ts';

export const PENDING_SUFFIX = '.new';

export interface NewSegment {
  segment: Segment;
  /** Open for writing; the file is still at `segment.path + PENDING_SUFFIX` until published. */
  handle: FileHandle;
}

/** Step 1: the new segment's file with its header, not yet in place. */
export async function createSegmentFile(dir: string, identity: SegmentIdentity, base: bigint, fsync: boolean): Promise<NewSegment> {
  const segment = new Segment(dir, base);
  const handle = await open(segment.path + PENDING_SUFFIX, 'wx');
  try {
    await writeAt(handle, encodeSegmentHeader({ ...identity, base }), 0);
    if (fsync) await handle.datasync();
    return { segment, handle };
  } catch (error) {
    await handle.close();
    throw error;
  }
}

/** Step 2: seals `segment` (open for writing through `handle`): the next segment begins at `end`. */
export async function sealSegment(handle: FileHandle, segment: Segment, end: bigint, fsync: boolean): Promise<void> {
  await writeAt(handle, encodeSeal(end), segment.size);
  if (fsync) await handle.datasync();
  segment.sealedEnd = end;
}

/** Step 3: puts the new segment in place. */
export async function publishSegment(segment: Segment, fsync: boolean): Promise<void> {
  await rename(segment.path + PENDING_SUFFIX, segment.path);
  if (fsync) await syncDir(dirname(segment.path));
}

export async function writeAt(handle: FileHandle, bytes: Buffer, position: number): Promise<void> {
  for (let done = 0; done < bytes.length;) done += (await handle.write(bytes, done, bytes.length - done, position + done)).bytesWritten;
}
