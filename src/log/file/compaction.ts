/**
 * Compaction of one partition: keep the latest record of each key, drop tombstones, and
 * never change an offset.
 *
 * 1. Roll: the writer starts a new, empty active segment (in order with queued appends).
 *    Every older segment is now closed (sealed); compaction reads and rewrites only those,
 *    while appends go on into the new segment.
 * 2. Pass one reads the closed segments for the latest offset of each key (keys only are
 *    held in memory). Pass two writes into `<first base>.log.compacting` a header, the
 *    records that are the latest of their key and not tombstones, and a seal with the last
 *    input's seal (the active segment's base), then datasyncs it. The output accounts for
 *    the whole range of its inputs even when it keeps no record, so the partition's chain
 *    of segments (recovery.ts) stays whole and the next offset is never forgotten.
 * 3. Swap, crash-safe at every step: rename the output over the first closed segment,
 *    remove the other inputs in ascending order, fsync the directory. A crash after the
 *    rename leaves inputs whose base lies inside the output's range: recovery removes them.
 *    A crash before the rename leaves only the temporary file, which recovery removes.
 * 4. The in-memory segment list is swapped, then the inputs are retired. Readers already
 *    inside an input keep reading it through its read handle, opened before the rename.
 *
 * Tombstones are dropped at the first compaction that finds them in a closed segment (no
 * tombstone retention time): a reader that is behind a compaction may miss a tombstone
 * together with the record it deleted.
 */
import { open, rename, rm, type FileHandle } from 'node:fs/promises';
import type { LogRecord } from '../event-log.ts';
import { FRAME_HEADER_BYTES, MAX_FRAME_BYTES, MAX_OFFSET_DELTA, encodeFrame, frameBytes, recordBytes } from './frame.ts';
import { readSegments } from './reader.ts';
import { COMPACTING_SUFFIX } from './recovery.ts';
import { Segment } from './segment.ts';
import { sealSegment, writeAt } from './segment-file.ts';
import { encodeSegmentHeader, type SegmentIdentity } from './segment-header.ts';
import { syncDir } from './sync.ts';
import type { SegmentAppender } from './segment-appender.ts';

/**
 * A compacted segment's frames are about the size of the segment index's interval (segment.ts:
 * INDEX_INTERVAL, 64 KiB), as the live writer's group frames mostly are: reading one record back
 * (a closed entry's, src/queue/closed-entries.ts) reads and CRC-checks the whole frame holding it.
 * With frames of 1 MiB, reading a closed entry back took 15-16 ms after a compaction against
 * ~1 ms before it; with 64 KiB frames, 1.3-1.6 ms (2026-12-07, 100-byte inputs, no cache).
 */
const OUTPUT_FRAME_BYTES = 64 << 10;

export interface CompactionHost {
  readonly dir: string;
  readonly identity: SegmentIdentity;
  readonly appender: SegmentAppender;
  segments(): readonly Segment[];
  replaceSegments(inputs: readonly Segment[], output: Segment): void;
  /** Told, before anything is rewritten, that the records below `horizon` are compacted (snapshots older than that are stale). */
  compacting?(horizon: bigint): Promise<void>;
}

export async function compactSegments(host: CompactionHost): Promise<void> {
  await host.appender.roll();
  const inputs = host.segments().slice(0, -1);
  if (inputs.length === 0) return;
  await host.compacting?.(inputs[inputs.length - 1]!.sealedEnd!);
  await Promise.all(inputs.map((segment) => segment.readHandle())); // before any rename
  const latest = await latestOffsets(inputs);
  const output = await writeKept(host, inputs, latest);
  await swap(host, inputs, output);
}

function readAll(inputs: readonly Segment[]): AsyncIterable<LogRecord> {
  const end = inputs[inputs.length - 1]!.sealedEnd!; // inputs are sealed (the roll before), their frames maybe unread
  return readSegments(() => inputs, { from: inputs[0]!.base, end, maxRecords: Number.POSITIVE_INFINITY });
}

async function latestOffsets(inputs: readonly Segment[]): Promise<Map<string, bigint>> {
  const latest = new Map<string, bigint>();
  for await (const { key, offset } of readAll(inputs)) latest.set(key, offset);
  return latest;
}

/** Writes the output segment (header, kept records, seal) to the temporary file. */
async function writeKept(host: CompactionHost, inputs: readonly Segment[], latest: Map<string, bigint>): Promise<Segment> {
  const output = new Segment(host.dir, inputs[0]!.base);
  const handle = await open(output.path + COMPACTING_SUFFIX, 'w');
  try {
    await writeAt(handle, encodeSegmentHeader({ ...host.identity, base: output.base }), 0);
    const frames = new FrameBuilder(output, handle);
    for await (const record of readAll(inputs)) {
      if (record.value !== null && latest.get(record.key) === record.offset) await frames.add(record);
    }
    await frames.flush();
    await sealSegment(handle, output, inputs[inputs.length - 1]!.sealedEnd!, false);
    await handle.datasync();
  } finally {
    await handle.close();
  }
  return output;
}

/** Packs records into frames of about OUTPUT_FRAME_BYTES, written one after another. */
class FrameBuilder {
  #records: LogRecord[] = [];
  #bytes = 0;
  constructor(
    readonly segment: Segment,
    readonly handle: FileHandle,
  ) {}

  async add(record: LogRecord): Promise<void> {
    const first = this.#records[0];
    const bytes = recordBytes(record.key, record.value);
    // A record joins the frame unless the frame is full, or would outgrow what the reader accepts with it.
    const outgrows = frameBytes(this.#bytes + bytes) - FRAME_HEADER_BYTES > MAX_FRAME_BYTES;
    if (first && (this.#bytes >= OUTPUT_FRAME_BYTES || outgrows || record.offset - first.offset > BigInt(MAX_OFFSET_DELTA)))
      await this.flush();
    this.#records.push(record);
    this.#bytes += bytes;
  }

  async flush(): Promise<void> {
    if (this.#records.length === 0) return;
    const frame = encodeFrame(this.#records, frameBytes(this.#bytes));
    const at = this.segment.size;
    await writeAt(this.handle, frame, at);
    this.segment.addFrame(at, at + frame.length, this.#records[0]!.offset, this.#records.at(-1)!.offset);
    this.#records = [];
    this.#bytes = 0;
  }
}

async function swap(host: CompactionHost, inputs: readonly Segment[], output: Segment): Promise<void> {
  await rename(output.path + COMPACTING_SUFFIX, output.path);
  for (const input of inputs.slice(1)) await rm(input.path);
  await syncDir(host.dir);
  host.replaceSegments(inputs, output);
  await Promise.all(inputs.map((input) => input.retire()));
}
