/**
 * Reading a partition from disk: find the segment holding the start offset, seek to the
 * indexed frame before it, then read frames sequentially in big chunks, crossing into later
 * segments. Segments are looked up afresh at each step, so a compaction that replaces
 * segments meanwhile is harmless: offsets never change, a reader only skips what was removed.
 */
import { RunlogError } from '../../errors.ts';
import type { LogRecord } from '../event-log.ts';
import { decodeFrame } from './frame.ts';
import { readFrames } from './frame-reader.ts';
import { segmentIndexFor, type Segment } from './segment.ts';

export interface ReadRange {
  from: bigint;
  /** Exclusive: records at or past it are not read. */
  end: bigint;
  maxRecords: number;
  chunkBytes?: number;
}

/** The segment to read next for `offset`, taking a read reference on it. */
function acquireSegmentFor(segments: () => readonly Segment[], offset: bigint): Segment | null {
  for (;;) {
    const list = segments();
    const segment = list[Math.max(segmentIndexFor(list, offset), 0)];
    if (segment === undefined) return null;
    if (segment.acquire()) return segment;
  }
}

/** The base of the first segment after `segment` in the current list, or null. */
function baseAfter(segments: readonly Segment[], segment: Segment): bigint | null {
  return segments[segmentIndexFor(segments, segment.base) + 1]?.base ?? null;
}

export async function* readSegments(segments: () => readonly Segment[], range: ReadRange): AsyncGenerator<LogRecord> {
  let next = range.from;
  let left = range.maxRecords;
  while (next < range.end && left > 0) {
    const segment = acquireSegmentFor(segments, next);
    if (segment === null) return;
    const batch: LogRecord[] = [];
    try {
      for await (const records of segmentBatches(segment, next, range, batch)) {
        for (const record of records) {
          if (record.offset >= range.end) return;
          yield record;
          next = record.offset + 1n;
          if (--left === 0) return;
        }
      }
    } finally {
      await segment.release();
    }
    const after = baseAfter(segments(), segment);
    if (after === null) return; // the active segment was read to its end
    if (after > next) next = after;
  }
}

/** The records >= from of `segment`, a frame at a time (reusing `batch`). */
async function* segmentBatches(segment: Segment, from: bigint, range: ReadRange, batch: LogRecord[]): AsyncGenerator<LogRecord[]> {
  const handle = await segment.readHandle();
  const push = (record: LogRecord): void => void batch.push(record);
  const frames = readFrames(handle, segment.positionFor(from), segment.size, range.chunkBytes);
  let step = await frames.next();
  for (; !step.done; step = await frames.next()) {
    const { buf, pos, end, filePos } = step.value;
    batch.length = 0;
    if (!decodeFrame(buf, pos, end, from, push)) throw corruptAt(segment, filePos, 'inconsistent record structure');
    if (batch.length > 0) yield batch;
  }
  if (step.value.kind !== 'end') throw corruptAt(segment, step.value.filePos, step.value.kind === 'bad' ? step.value.reason : 'incomplete frame');
}

function corruptAt(segment: Segment, filePos: number, reason: string): RunlogError {
  return new RunlogError('Corrupt', `${segment.path}: bad frame at byte ${filePos}: ${reason}`);
}
