/**
 * Reading a partition from disk: find the segment holding the start offset, seek to the
 * indexed frame before it, then read frames sequentially in big chunks, crossing into later
 * segments. Segments are looked up afresh at each step, so a compaction that replaces
 * segments meanwhile is harmless: offsets never change, a reader only skips what was removed.
 */
import { RunlogError } from '../../errors.ts';
import type { BatchedRecords, LogRecord } from '../event-log.ts';
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

/** The records of `range`, in offset order; also a frame's records at a time (`batches`). */
export function readSegments(segments: () => readonly Segment[], range: ReadRange): BatchedRecords {
  return {
    [Symbol.asyncIterator]: () => new FlatIterator(readBatches(segments, range, false)),
    batches: () => readBatches(segments, range, true),
  };
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
 * The records >= from of `segment`, a frame at a time. Every frame is CRC-checked as it is
 * read (frame-reader.ts), and its offsets must follow the frame before and lie inside the
 * segment: a sealed segment's frames are checked here, not at open (recovery.ts).
 */
async function* segmentBatches(segment: Segment, from: bigint, range: ReadRange, views: boolean): AsyncGenerator<LogRecord[]> {
  const start = await segment.seek(from);
  const handle = await segment.readHandle();
  let batch: LogRecord[] = [];
  const push = (record: LogRecord): void => void batch.push(record);
  // Views are decoded before the next batch is asked for (BatchedRecords.batches): one buffer serves.
  const frames = readFrames(handle, start, segment.size, range.chunkBytes, views);
  let floor = segment.base; // the lowest offset the next frame may start at
  let step = await frames.next();
  for (; !step.done; step = await frames.next()) {
    const { buf, pos, end, filePos, base, count } = step.value;
    if (base < floor) throw corruptAt(segment, filePos, `offset ${base} out of order`);
    floor = base + BigInt(count);
    batch = [];
    if (!decodeFrame(buf, pos, end, from, push, views)) throw corruptAt(segment, filePos, 'inconsistent record structure');
    if (batch.length === 0) continue;
    const last = batch[batch.length - 1]!.offset;
    if (segment.sealedEnd !== null && last >= segment.sealedEnd)
      throw corruptAt(segment, filePos, `offset ${last} lies past the segment's seal (${segment.sealedEnd})`);
    yield batch;
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
