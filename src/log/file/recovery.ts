/**
 * Recovery: what open() does to a partition directory before anything is written. It
 * proves the partition whole, or refuses it.
 *
 * Every segment's header must name this log, this partition and the base in the file's
 * name. The segments must chain from offset 0 with no gap: each but the last is sealed
 * (frame.ts) with the base of the next, and every record lies inside its segment's range.
 * A missing, renamed or foreign segment, a partition without segments, a sealed last
 * segment whose successor is gone: `Corrupt`, naming the file, never a shorter log.
 *
 * Opening costs what the active segment holds, not the log's length (as Kafka's recovery
 * point does). Only the last segment, the active one, is read frame by frame and every
 * frame CRC-checked: since one group-commit write is one frame, each write is made durable
 * before the next begins, and a segment is sealed (and the seal made durable) before its
 * successor is put in place, a crash can damage only the last frame of the last segment (a
 * torn tail: cut short, garbage, or zeros where the file system extended the file but never
 * got the data). That tail is cut, and reported (RUNLOG_TORN_TAIL). Damage anywhere else in
 * it, or a damaged frame followed by a valid one, which a torn write cannot produce, is
 * corruption: `Corrupt`, naming file and byte. What this check proved is not proved again: this
 * process's reads of those frames (a replay from zero above all) skip their CRC and record walk
 * (Segment.checkedTo), while every frame appended since is checked when read.
 *
 * CLEAN CLOSE. A clean close (every append durable, the writer undamaged: file-log.ts) records
 * in the partition's reached record (reached.ts) where its active segment ended: the segment's
 * base, its size in bytes and where its last frame starts. Since nothing but this log's writer
 * appends to the file, and an append only makes it longer, a last segment found with that base
 * and exactly that size holds the frames the close left, whole, as Kafka trusts a log after a
 * clean shutdown: it is opened without reading its frames, but for the last one, which must be
 * a whole CRC-valid frame ending the file and the recorded end. Its other frames are checked
 * when read, as a sealed segment's are, so damage there is found by the read that meets it (a
 * replay from zero: at once), not by the open; and a replay reads the bytes once, not twice.
 * Nothing is appended to it: the writer seals it before its first append (segment-appender.ts),
 * so it is then a sealed segment like any other, and damage in it never makes a later open
 * (after a crash, which scans only the active segment) refuse the partition.
 * Any mismatch (another size: an append, a torn tail, a cut; another base: a roll) and the
 * segment is scanned as above. What it cannot tell: a record hand-edited to a lower end and a
 * `lastFrame` inside a record value that happens to hold a whole CRC-valid frame ending the file
 * is trusted (test/log/file-clean-close.test.ts shows it): the record is the log's own metadata,
 * trusted as Kafka trusts its clean-shutdown marker, and editing it is damage no open can tell
 * from the truth without reading every frame (as editing a segment with valid CRCs is).
 *
 * The sealed segments before it are checked structurally: header, and a valid seal in the
 * file's last bytes (a segment cut short or extended has none there), chaining to the next
 * segment; and the first frame's header, if any, must be one. Their frames are not read
 * here: every read of them (reader.ts: reads, replay, compaction's input, the read-back of
 * closed entries, `runlog verify`) CRC-checks each frame it meets, and a damaged one fails
 * that read with `Corrupt` naming file and byte, never a silently shorter log. Bit rot in a
 * sealed segment is found when it is read, not at open.
 *
 * Scanning only plans repairs; the caller applies them once every partition has scanned
 * cleanly, so a failed open writes nothing (a read-only open never applies them). Besides
 * the torn tail, repairs finish what a crash interrupted: a roll (segment-file.ts: a `.new`
 * segment put in place, or removed if the seal before it was not written) and a compaction
 * (compaction.ts: its temporary file removed, and inputs it had already merged, whose base
 * lies inside the output's range, removed).
 */
import { open, readdir, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { RunlogError } from '../../errors.ts';
import { FRAME_HEADER_BYTES, FRAME_MAGIC, SEAL_BYTES, SEAL_MAGIC, checkFrame, lastOffsetOfFrame } from './frame.ts';
import { readFrames } from './frame-reader.ts';
import type { Reached } from './reached.ts';
import { Segment, parseSegmentFileName, segmentFileName } from './segment.ts';
import { PENDING_SUFFIX } from './segment-file.ts';
import { SEGMENT_HEADER_BYTES, checkSegmentHeader, decodeSegmentHeader, type SegmentIdentity } from './segment-header.ts';

export const COMPACTING_SUFFIX = '.compacting';

export type Repair =
  | { kind: 'truncate'; path: string; size: number; message: string }
  | { kind: 'remove'; path: string; message: string }
  | { kind: 'publish'; from: string; to: string; message: string };

export interface PartitionScan {
  /** The partition's segments as they will be once the repairs are made; the last is the active one. */
  segments: Segment[];
  repairs: Repair[];
}

export interface ScanOptions {
  /**
   * A read-only open (read-only-log.ts), which a live writer may be writing under: each
   * segment's file stays open as its read handle, so the bytes scanned stay readable; a
   * writer's files in the making (a roll's `.new`, a compaction's output) are no repair to
   * report; a last segment the writer sealed meanwhile ends the snapshot at its seal.
   */
  readOnly: boolean;
}

function corrupt(path: string, reason: string): RunlogError {
  return new RunlogError('Corrupt', `${path}: ${reason}`);
}

function byOffset(a: bigint, b: bigint): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Scans partition `identity.partition`'s directory `dir`; Corrupt unless it is whole. `reached`:
 * the partition's reached record, if any (its clean close spares reading the active segment).
 */
export async function scanPartition(
  dir: string,
  identity: SegmentIdentity,
  options: ScanOptions,
  reached: Reached | null = null,
): Promise<PartitionScan> {
  const names = await readdir(dir);
  const repairs: Repair[] = names
    .filter((name) => name.endsWith(COMPACTING_SUFFIX) && !options.readOnly)
    .map((name) => ({ kind: 'remove', path: join(dir, name), message: `removing ${join(dir, name)}, left by an interrupted compaction` }));
  const bases = names.flatMap((name) => parseSegmentFileName(name) ?? []).sort(byOffset);
  if (bases.length === 0) throw corrupt(dir, 'the partition holds no segment (its segments were removed?)');
  const segments: Segment[] = [];
  try {
    for (const [i, base] of bases.entries()) {
      const segment = await openSegment(dir, identity, base, i === bases.length - 1, options, repairs, reached);
      const previous = segments.at(-1);
      if (previous !== undefined && previous.sealedEnd !== null && base < previous.sealedEnd) {
        dropMerged(previous, segment, repairs);
        await segment.retire();
        continue;
      }
      if (previous === undefined && base !== 0n)
        throw corrupt(segment.path, `the partition's first segment starts at offset ${base}, not 0: the segments before it are missing`);
      if (previous !== undefined) checkChained(previous, segment);
      segments.push(segment);
    }
    await finishRoll(dir, identity, names, segments, options, repairs);
    return { segments, repairs };
  } catch (error) {
    await Promise.all(segments.map((segment) => segment.retire()));
    throw error;
  }
}

/** A segment after `previous` whose base lies inside previous's range: an input an interrupted compaction already merged. */
function dropMerged(previous: Segment, segment: Segment, repairs: Repair[]): void {
  if (segment.sealedEnd === null || segment.sealedEnd > previous.sealedEnd!) {
    throw corrupt(segment.path, `overlaps ${previous.path} (which ends at offset ${previous.sealedEnd}) and is not a segment it merged`);
  }
  repairs.push({ kind: 'remove', path: segment.path, message: `removing ${segment.path}, already merged by an interrupted compaction` });
}

function checkChained(previous: Segment, next: Segment): void {
  if (previous.sealedEnd === null) throw corrupt(previous.path, `is not sealed, yet ${next.path} follows it`);
  if (previous.sealedEnd < next.base) {
    throw corrupt(
      next.path,
      `offsets ${previous.sealedEnd} to ${next.base - 1n} are missing: ${previous.path} ends at ${previous.sealedEnd}, and no segment holds them`,
    );
  }
}

/**
 * The last segment must be the active one, unsealed, unless a roll was interrupted after
 * its seal: then its successor waits as `.new` and is put in place. Any other `.new` is a
 * roll interrupted before its seal was written: removed.
 */
async function finishRoll(
  dir: string,
  identity: SegmentIdentity,
  names: string[],
  segments: Segment[],
  options: ScanOptions,
  repairs: Repair[],
): Promise<void> {
  const last = segments[segments.length - 1]!;
  if (options.readOnly) return checkSuccessorExists(dir, last, names);
  const successorName = last.sealedEnd === null ? null : segmentFileName(last.sealedEnd) + PENDING_SUFFIX;
  const pending = names.filter((name) => name.endsWith(`.log${PENDING_SUFFIX}`));
  for (const name of pending.filter((name) => name !== successorName)) {
    repairs.push({ kind: 'remove', path: join(dir, name), message: `removing ${join(dir, name)}, left by an interrupted segment roll` });
  }
  if (successorName === null) return;
  const successor = new Segment(dir, last.sealedEnd!);
  if (!pending.includes(successorName)) {
    throw corrupt(last.path, `is sealed at offset ${last.sealedEnd}, but the segment that follows it (${successor.path}) is missing`);
  }
  const handle = await open(successor.path + PENDING_SUFFIX, 'r');
  try {
    const { size } = await handle.stat();
    await readHeader(handle, successor.path + PENDING_SUFFIX, identity, successor.base);
    if (size !== SEGMENT_HEADER_BYTES)
      throw corrupt(successor.path + PENDING_SUFFIX, 'a segment not yet in place holds more than its header');
  } finally {
    await handle.close();
  }
  repairs.push({
    kind: 'publish',
    from: successor.path + PENDING_SUFFIX,
    to: successor.path,
    message: `${successor.path}: finishing an interrupted segment roll`,
  });
  segments.push(successor);
}

/**
 * Read-only: a sealed last segment ends the snapshot (the records after its seal belong to
 * a successor this snapshot does not read), but the successor must exist, in place or as
 * `.new`: looked for again, since a live writer may have rolled since the directory was listed.
 */
async function checkSuccessorExists(dir: string, last: Segment, names: string[]): Promise<void> {
  if (last.sealedEnd === null) return;
  const name = segmentFileName(last.sealedEnd);
  const now = names.includes(name + PENDING_SUFFIX) ? names : await readdir(dir);
  if (!now.includes(name) && !now.includes(name + PENDING_SUFFIX)) {
    throw corrupt(last.path, `is sealed at offset ${last.sealedEnd}, but the segment that follows it (${join(dir, name)}) is missing`);
  }
}

async function readHeader(handle: FileHandle, path: string, identity: SegmentIdentity, base: bigint): Promise<void> {
  const buf = Buffer.alloc(SEGMENT_HEADER_BYTES);
  const { bytesRead } = await handle.read(buf, 0, SEGMENT_HEADER_BYTES, 0);
  checkSegmentHeader(decodeSegmentHeader(buf.subarray(0, bytesRead), path), { ...identity, base }, path);
}

/** Reads one segment file whole: header, frames, seal. */
async function openSegment(
  dir: string,
  identity: SegmentIdentity,
  base: bigint,
  isLast: boolean,
  options: ScanOptions,
  repairs: Repair[],
  reached: Reached | null,
): Promise<Segment> {
  const segment = new Segment(dir, base);
  const handle = await open(segment.path, 'r');
  try {
    await readHeader(handle, segment.path, identity, base);
    if (isLast && (await openedClean(segment, handle, reached))) {
      // Left whole by a clean close: its frames are checked when read (CLEAN CLOSE above).
    } else if (isLast) {
      const torn = await scanFrames(segment, handle, isLast);
      if (torn) repairs.push(torn);
    } else {
      await checkSealed(segment, handle);
    }
  } catch (error) {
    await handle.close();
    throw error;
  }
  if (options.readOnly) segment.keepReadHandle(handle);
  else await handle.close();
  return segment;
}

/**
 * Whether the last segment is as a clean close left it (CLEAN CLOSE above): the record names
 * it, its size is the recorded one, and its last frame is whole and ends at the recorded end.
 * If so the segment is opened unread; if not nothing is changed (it is then scanned).
 */
async function openedClean(segment: Segment, handle: FileHandle, reached: Reached | null): Promise<boolean> {
  const clean = reached?.clean;
  if (clean === null || clean === undefined || clean.segment !== segment.base || clean.lastFrame < SEGMENT_HEADER_BYTES) return false;
  const frameBytes = clean.bytes - clean.lastFrame;
  if (frameBytes <= FRAME_HEADER_BYTES || (await handle.stat()).size !== clean.bytes) return false;
  const frame = Buffer.allocUnsafe(frameBytes); // read over whole, and checked only up to what was read
  const { bytesRead } = await handle.read(frame, 0, frameBytes, clean.lastFrame);
  const check = checkFrame(frame, 0, bytesRead);
  if (check.kind !== 'frame' || check.end !== frameBytes || check.base < segment.base) return false;
  const last = lastOffsetOfFrame(frame, 0, frameBytes);
  if (last === null || last + 1n !== reached!.end) return false;
  segment.openedClean(clean.bytes, clean.lastFrame, check.base, last);
  return true;
}

/**
 * A segment before the last, checked without reading its frames: a seal in its last bytes
 * (lying after its base), and a frame's header where its first frame starts, if any.
 */
async function checkSealed(segment: Segment, handle: FileHandle): Promise<void> {
  const { size } = await handle.stat();
  const notSealed = (why: string): RunlogError =>
    corrupt(segment.path, `is not the last segment, yet ${why} (cut short, extended or damaged?)`);
  if (size < SEGMENT_HEADER_BYTES + SEAL_BYTES) throw notSealed(`it is ${size} bytes long, too short for a header and a seal`);
  const seal = Buffer.alloc(SEAL_BYTES);
  await handle.read(seal, 0, SEAL_BYTES, size - SEAL_BYTES);
  const check = checkFrame(seal, 0, SEAL_BYTES);
  if (check.kind !== 'seal') throw notSealed(`its last ${SEAL_BYTES} bytes (from byte ${size - SEAL_BYTES}) are not a seal`);
  if (check.endOffset <= segment.base)
    throw corrupt(segment.path, `its seal (end offset ${check.endOffset}) does not lie after its base ${segment.base}`);
  const framesEnd = size - SEAL_BYTES;
  if (framesEnd > SEGMENT_HEADER_BYTES) await checkFirstFrameHeader(segment, handle, framesEnd);
  segment.openedSealed(framesEnd, check.endOffset);
}

/** The bytes after the header start a frame: its magic, and a length that ends inside the segment. */
async function checkFirstFrameHeader(segment: Segment, handle: FileHandle, framesEnd: number): Promise<void> {
  const header = Buffer.alloc(FRAME_HEADER_BYTES);
  const whole = framesEnd - SEGMENT_HEADER_BYTES >= FRAME_HEADER_BYTES;
  if (whole) await handle.read(header, 0, FRAME_HEADER_BYTES, SEGMENT_HEADER_BYTES);
  if (!whole || header.readUInt32LE(0) !== FRAME_MAGIC || SEGMENT_HEADER_BYTES + FRAME_HEADER_BYTES + header.readUInt32LE(8) > framesEnd)
    throw corrupt(segment.path, `bad frame at byte ${SEGMENT_HEADER_BYTES}: its first frame's header is not one (bad magic or length)`);
}

/** Fills `segment`'s index and seal from its file; returns the repair for a torn tail, if any. */
async function scanFrames(segment: Segment, handle: FileHandle, isLast: boolean): Promise<Repair | null> {
  const { size } = await handle.stat();
  const frames = readFrames(handle, SEGMENT_HEADER_BYTES, size, undefined, true); // frames are checked, never kept
  let step = await frames.next();
  for (; !step.done; step = await frames.next()) {
    for (const { buf, pos, end, filePos, base } of step.value) {
      const last = lastOffsetOfFrame(buf, pos, end);
      const at = `bad frame at byte ${filePos}`;
      if (last === null) throw corrupt(segment.path, `${at}: inconsistent record structure`);
      if (base < segment.base || (segment.lastOffset !== null && base <= segment.lastOffset))
        throw corrupt(segment.path, `${at}: offset ${base} out of order`);
      segment.addFrame(filePos, filePos + (end - pos), base, last);
    }
  }
  segment.checkedTo = segment.size; // every frame up to here was checked whole just now
  const ending = step.value;
  if (ending.kind === 'end') return null;
  if (ending.kind === 'seal') {
    checkSeal(segment, ending.endOffset, ending.filePos, size);
    segment.sealedEnd = ending.endOffset;
    return null;
  }
  const reason = ending.kind === 'bad' ? ending.reason : 'incomplete frame';
  if (!isLast || (await validFrameAfter(handle, ending.filePos, size)))
    throw corrupt(segment.path, `bad frame at byte ${ending.filePos}: ${reason}`);
  const message = `${segment.path}: cutting a torn tail of ${size - ending.filePos} bytes at byte ${ending.filePos} (${reason})`;
  return { kind: 'truncate', path: segment.path, size: ending.filePos, message };
}

function checkSeal(segment: Segment, endOffset: bigint, filePos: number, size: number): void {
  if (filePos + SEAL_BYTES !== size) throw corrupt(segment.path, `${size - filePos - SEAL_BYTES} bytes after its seal at byte ${filePos}`);
  if (endOffset < segment.nextOffset || endOffset <= segment.base) {
    throw corrupt(
      segment.path,
      `its seal (end offset ${endOffset}) does not lie after its records (base ${segment.base}, next ${segment.nextOffset})`,
    );
  }
}

/** Whether a whole, CRC-valid frame or seal starts anywhere in the file after `from`. */
async function validFrameAfter(handle: FileHandle, from: number, size: number): Promise<boolean> {
  const rest = Buffer.alloc(size - from);
  await handle.read(rest, 0, rest.length, from);
  for (const magicValue of [FRAME_MAGIC, SEAL_MAGIC]) {
    const magic = Buffer.alloc(4);
    magic.writeUInt32LE(magicValue);
    for (let at = rest.indexOf(magic, 1); at >= 0; at = rest.indexOf(magic, at + 1)) {
      const { kind } = checkFrame(rest, at, rest.length);
      if (kind === 'frame' || kind === 'seal') return true;
    }
  }
  return false;
}
