/**
 * Reading a partition from disk: find the segment holding the start offset, seek to the
 * indexed frame before it, then read frames sequentially in big chunks, crossing into later
 * segments. Segments are looked up afresh at each step, so a compaction that replaces
 * segments meanwhile is harmless: offsets never change, a reader only skips what was removed.
 */
import { RunlogError } from '../../errors.ts';
import type { BatchedRecords, LogRecord, RecordVisitor } from '../event-log.ts';
import { FRAME_INCONSISTENT, FRAME_OFFSETS_TOO_LARGE, decodeFrame, lastOffsetOfFrame, visitFrame, type VisitBudget } from './frame.ts';
import { readFrames, type FrameView } from './frame-reader.ts';
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

/** The records of `range`, in offset order; also a frame's records at a time (`batches`), or where they lie (`visit`). */
export function readSegments(segments: () => readonly Segment[], range: ReadRange): BatchedRecords {
  return {
    [Symbol.asyncIterator]: () => new FlatIterator(readBatches(segments, range, false)),
    batches: () => readBatches(segments, range, true),
    visit: (visitor) => visitSegments(segments, range, visitor),
  };
}

/**
 * The records of `range` handed to `visitor` where they lie in the read buffers, no record made
 * (BatchedRecords.visit): the same frames, checks and order as readBatches. A frame is checked
 * whole (its structure, and against its segment's seal) before any of its records is visited,
 * unless this process checked it whole at open (Segment.checkedTo): then it is walked once.
 * Answers how many records were visited.
 */
async function visitSegments(segments: () => readonly Segment[], range: ReadRange, visitor: RecordVisitor): Promise<number> {
  let next = range.from;
  const end = range.end;
  // Offsets are safe integers here (visitFrame refuses others); `end` and `maxRecords` bound the visit.
  const budget: VisitBudget = {
    max: range.maxRecords,
    below: end > BigInt(Number.MAX_SAFE_INTEGER) ? Number.POSITIVE_INFINITY : Number(end),
    visited: 0,
    ended: false,
  };
  while (next < end && budget.visited < budget.max) {
    const segment = acquireSegmentFor(segments, next);
    if (segment === null) break;
    try {
      for await (const { frames, lasts } of segmentFrames(segment, next, range)) {
        // The last offset visited in the run; `next` follows once per run, not per frame (two bigints
        // each): a frame of a run starts past the one before it (segmentFrames), so a `next` behind skips nothing more.
        let lastInRun = -1;
        for (let i = 0; i < frames.length; i++) {
          const frame = frames[i]!;
          const { buf, pos, end: frameEnd, filePos } = frame;
          if (frame.count === 0) continue;
          const last = lasts[i] ?? null; // checked whole by segmentFrames (null: checked at open, not walked again)
          const lastVisited = visitFrame(buf, pos, frameEnd, frame.base, next, budget, visitor);
          // Offsets past 2^53 - 2^32 (9e15 records: a damaged or crafted file) cannot be visited as numbers.
          if (lastVisited === FRAME_OFFSETS_TOO_LARGE)
            throw corruptAt(segment, filePos, `offset ${last ?? frame.base} is too large to visit`);
          // Only a checked frame whose bytes changed on disk since (someone else wrote the file) can be inconsistent here.
          if (lastVisited === FRAME_INCONSISTENT) throw corruptAt(segment, filePos, 'inconsistent record structure');
          if (lastVisited >= 0) lastInRun = lastVisited;
          if (budget.visited === budget.max || budget.ended || (last !== null && last >= end)) return budget.visited;
        }
        if (lastInRun >= 0) next = BigInt(lastInRun) + 1n;
      }
    } finally {
      await segment.release();
    }
    const after = baseAfter(segments(), segment);
    if (after === null) break; // the active segment was read to its end
    if (after > next) next = after;
  }
  return budget.visited;
}

/** The last offset of a frame checked whole (structure, and the segment's seal), or Corrupt. */
function checkedLast(segment: Segment, frame: FrameView): bigint {
  const last = lastOffsetOfFrame(frame.buf, frame.pos, frame.end);
  if (last === null) throw corruptAt(segment, frame.filePos, 'inconsistent record structure');
  if (segment.sealedEnd !== null && last >= segment.sealedEnd)
    throw corruptAt(segment, frame.filePos, `offset ${last} lies past the segment's seal (${segment.sealedEnd})`);
  return last;
}

/** With `views`, values are views of the read buffers (see BatchedRecords.batches); else copies. */
async function* readBatches(segments: () => readonly Segment[], range: ReadRange, views: boolean): AsyncGenerator<LogRecord[]> {
  let next = range.from;
  let left = range.maxRecords;
  while (next < range.end && left > 0) {
    const segment = acquireSegmentFor(segments, next);
    if (segment === null) return;
    try {
      for await (let records of segmentBatches(segment, next, range, views)) {
        const last = records[records.length - 1]!.offset;
        if (last >= range.end) records = records.filter((r) => r.offset < range.end);
        if (records.length > left) records = records.slice(0, left);
        if (records.length === 0) return;
        left -= records.length;
        next = records[records.length - 1]!.offset + 1n;
        yield records;
        if (left === 0 || last >= range.end) return;
      }
    } finally {
      await segment.release();
    }
    const after = baseAfter(segments(), segment);
    if (after === null) return; // the active segment was read to its end
    if (after > next) next = after;
  }
}

/**
 * Hands out the records of batches one by one. Reading is a frame at a time; going through
 * an async generator per record as well would cost more than decoding it.
 */
class FlatIterator implements AsyncIterator<LogRecord> {
  #batches: AsyncGenerator<LogRecord[]>;
  #batch: LogRecord[] = [];
  #index = 0;

  constructor(batches: AsyncGenerator<LogRecord[]>) {
    this.#batches = batches;
  }

  next(): Promise<IteratorResult<LogRecord>> {
    const record = this.#batch[this.#index];
    if (record === undefined) return this.#nextBatch();
    this.#index++;
    return Promise.resolve({ done: false, value: record });
  }

  async #nextBatch(): Promise<IteratorResult<LogRecord>> {
    const step = await this.#batches.next();
    if (step.done) return { done: true, value: undefined };
    this.#batch = step.value;
    this.#index = 1;
    return { done: false, value: step.value[0]! };
  }

  async return(): Promise<IteratorResult<LogRecord>> {
    this.#batch = [];
    await this.#batches.return(undefined);
    return { done: true, value: undefined };
  }
}

/**
 * The records >= from of `segment`, a run of frames at a time (segmentFrames: each frame
 * CRC-checked, its structure, order and seal checked; a sealed segment's here, not at open).
 */
async function* segmentBatches(segment: Segment, from: bigint, range: ReadRange, views: boolean): AsyncGenerator<LogRecord[]> {
  let batch: LogRecord[] = [];
  const push = (record: LogRecord): void => void batch.push(record);
  for await (const { frames } of segmentFrames(segment, from, range, views)) {
    batch = [];
    // segmentFrames checked each frame against the seal; a frame checked at open can be inconsistent only if its bytes changed since.
    for (const { buf, pos, end, filePos } of frames) {
      if (!decodeFrame(buf, pos, end, from, push, views)) throw corruptAt(segment, filePos, 'inconsistent record structure');
    }
    if (batch.length > 0) yield batch;
  }
}

/** A run of frames (frame-reader.ts) and each one's last offset, checked (null: none, or a frame this process checked whole at open). */
interface CheckedRun {
  frames: readonly FrameView[];
  lasts: readonly (bigint | null)[];
}

/**
 * The CRC-checked frames of `segment` from the one holding `from`, in runs (every whole frame
 * a read brought: frame-reader.ts), each checked whole (its record structure, and within the
 * segment's seal: checkedLast) and starting past the last offset of the frame before it
 * (Corrupt otherwise: a frame whose offsets overlap the one before, even with its CRC made to
 * match, would hand out an offset twice and out of order); then Corrupt if the segment does not
 * end cleanly. A frame this process checked whole at open (the active segment's: recovery.ts,
 * which checked its order the same way) is not walked again. With `reuse` the read buffer is
 * reused: a run's bytes are valid until the next.
 */
async function* segmentFrames(segment: Segment, from: bigint, range: ReadRange, reuse = true): AsyncGenerator<CheckedRun> {
  const start = await segment.seek(from);
  const handle = await segment.readHandle();
  const frames = readFrames(handle, start, segment.size, range.chunkBytes, reuse, segment.checkedTo);
  let floor = segment.base; // the lowest offset the next frame may start at
  let step = await frames.next();
  for (; !step.done; step = await frames.next()) {
    const lasts: (bigint | null)[] = [];
    for (const frame of step.value) {
      if (frame.base < floor) throw corruptAt(segment, frame.filePos, `offset ${frame.base} out of order`);
      const last = frame.checked || frame.count === 0 ? null : checkedLast(segment, frame);
      // A frame checked at open was appended (deltas 0 to count - 1): it ends at base + count - 1.
      floor = last === null ? frame.base + BigInt(frame.count) : last + 1n;
      lasts.push(last);
    }
    yield { frames: step.value, lasts };
  }
  const ending = step.value;
  if (ending.kind !== 'end')
    throw corruptAt(
      segment,
      ending.filePos,
      ending.kind === 'bad' ? ending.reason : ending.kind === 'seal' ? 'a seal before the end' : 'incomplete frame',
    );
}

function corruptAt(segment: Segment, filePos: number, reason: string): RunlogError {
  return new RunlogError('Corrupt', `${segment.path}: bad frame at byte ${filePos}: ${reason}`);
}
