/**
 * One partition of the file log: its directory of segments, its appender (the one writer), and the wake-ups
 * tails wait on. The segment list is only ever appended to (by the appender's roll) or
 * replaced whole (by compaction), so readers look it up afresh at each step.
 */
import { open } from 'node:fs/promises';
import type { LogRecord } from '../event-log.ts';
import { AppendWaiters } from '../tail.ts';
import { compactSegments } from './compaction.ts';
import type { CleanClose } from './reached.ts';
import { readSegments } from './reader.ts';
import type { Segment } from './segment.ts';
import type { SegmentIdentity } from './segment-header.ts';
import { SegmentAppender, type AppenderHost, type AppenderOptions } from './segment-appender.ts';

export type PartitionOptions = AppenderOptions;

export class FilePartition implements AppenderHost {
  readonly dir: string;
  readonly identity: SegmentIdentity;
  #segments: Segment[];
  #appender!: SegmentAppender;
  #nextOffset: bigint;
  readonly #waiters = new AppendWaiters();
  #compaction: Promise<void> = Promise.resolve();
  /** Set by the log: records a compaction's horizon before it rewrites anything (snapshot-store.ts). */
  compacting?: (horizon: bigint) => Promise<void>;

  private constructor(dir: string, identity: SegmentIdentity, segments: Segment[]) {
    this.dir = dir;
    this.identity = identity;
    this.#segments = segments;
    this.#nextOffset = this.activeSegment().nextOffset;
  }

  /** Opens a scanned (and repaired) partition directory: its segments, the last one active. */
  static async open(dir: string, identity: SegmentIdentity, segments: Segment[], options: PartitionOptions): Promise<FilePartition> {
    const handle = await open(segments.at(-1)!.path, 'r+');
    const partition = new FilePartition(dir, identity, segments);
    partition.#appender = new SegmentAppender(partition, handle, options);
    return partition;
  }

  activeSegment(): Segment {
    return this.#segments[this.#segments.length - 1]!;
  }

  addSegment(segment: Segment): void {
    this.#segments = [...this.#segments, segment];
  }

  committed(nextOffset: bigint): void {
    this.#nextOffset = nextOffset;
    this.#waiters.wakeAll();
  }

  get endOffset(): bigint {
    return this.#nextOffset;
  }

  get appender(): SegmentAppender {
    return this.#appender;
  }

  segments(): readonly Segment[] {
    return this.#segments;
  }

  read(from: bigint, maxRecords: number): AsyncIterable<LogRecord> {
    return readSegments(() => this.#segments, { from, end: this.#nextOffset, maxRecords });
  }

  /** Resolves once a record at or after `offset` is committed, or the signal aborts. */
  appended(offset: bigint, signal: AbortSignal): Promise<void> {
    return this.#waiters.wait(offset, this.#nextOffset, signal);
  }

  /** Compactions of a partition run one at a time. */
  compact(): Promise<void> {
    const run = this.#compaction.then(() => compactSegments(this));
    this.#compaction = run.catch(() => undefined);
    return run;
  }

  /** Swaps compacted `inputs` (the first segments of the list) for `output`. */
  replaceSegments(inputs: readonly Segment[], output: Segment): void {
    this.#segments = [output, ...this.#segments.slice(inputs.length)];
  }

  /**
   * After close(): where it left the active segment, if the writer closed sound with every append
   * durable (a clean close: recovery.ts); else null.
   */
  cleanClose(): CleanClose | null {
    const active = this.activeSegment();
    if (!this.#appender.closedCleanly || active.sealedEnd !== null) return null;
    return { segment: active.base, bytes: active.size, lastFrame: active.lastFrameAt };
  }

  async close(): Promise<void> {
    await this.#compaction;
    await this.#appender.close();
    this.committed(this.#nextOffset); // wakes tails so they notice the close
    await Promise.all(this.#segments.map((segment) => segment.retire()));
  }
}
