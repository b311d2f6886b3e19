/**
 * SegmentAppender: the one writer of a file-log partition. It appends frames to the active
 * segment, group-committed (one write and one datasync per group), rolls segments and repairs
 * a failed write. One idea, kept whole (about 300 lines): the write, the roll and the repair
 * share the file handle, the next offset and the mode below, and are ordered by one queue.
 *
 * fsync costs a fixed ~0.1–10 ms whatever it flushes, so one fsync per append caps a
 * partition at a few hundred or thousand appends/s. Instead append() only queues its batch
 * and at most one write+fsync is in flight per partition:
 *
 *   idle ──append──▶ writing group G1 (write + datasync)
 *                      │  appends arriving meanwhile queue up
 *                      ▼
 *                    G1 durable: resolve G1's callers, wake tails
 *                      │  queue not empty? its appends (up to MAX_GROUP_BYTES) form G2,
 *                      ▼  written as ONE frame with ONE write and ONE datasync
 *                    ... until the queue is empty ──▶ idle
 *
 * Offsets are assigned when a group is formed, so they are dense and follow queue order;
 * each caller resolves with its own offsets, only after the datasync covering its batch.
 * A group is one frame (one CRC), so each batch in it is atomic (the group even more so),
 * and since a write starts only after the previous one is durable, a crash can tear only
 * the last frame of the log: recovery (recovery.ts) relies on that.
 *
 * The segment rolls (a new file named by the next offset, the old one sealed: see
 * segment-file.ts) before a group that would take the active segment past segmentBytes, before
 * the first group after a clean reopen that did not read the segment (recovery.ts: CLEAN
 * CLOSE), and on request (compaction, in the queue's order).
 *
 * Modes:
 *
 *   ready ──a write, datasync or roll fails──▶ damaged ──repair succeeds──▶ ready
 *     │                                           │
 *     └──────────────── the lock lost ────────────┴──▶ fenced (every append refused)
 *
 * Apart from the mode, close() refuses new appends at once (Stopped), lets the queued ones
 * finish (repairing first if need be), and repairs a damaged writer before closing the file.
 *
 * A failed write, datasync or roll leaves bytes of unknown content past the last durable
 * frame (a partial frame or seal), or a roll half done. The group fails (LogUnavailable),
 * and so does every append queued behind it (EventLog's contract: they were called before
 * the failure was reported). The writer does not give up: the next group first repairs
 * (#repair: the active segment cut back to its last durable frame, or the roll finished)
 * and is then tried afresh. So a full disk heals by itself once space is freed, as Kafka's
 * writer does; while it lasts each group fails on its own.
 *
 * Before every write the writer checks that this process still holds the directory's lock
 * (lock.ts); once it is lost, the writer stops: `Fenced`, for good.
 */
import { fdatasync, writeSync } from 'node:fs';
import { access, open, rm, type FileHandle } from 'node:fs/promises';
import { RunlogError } from '../../errors.ts';
import type { AppendRecord } from '../event-log.ts';
import { encodeAppend, groupFrame, type EncodedAppend } from './append-frame.ts';
import { Segment } from './segment.ts';
import { PENDING_SUFFIX, createSegmentFile, publishSegment, sealSegment } from './segment-file.ts';
import type { SegmentIdentity } from './segment-header.ts';
import { syncDir } from './sync.ts';

const MAX_GROUP_BYTES = 16 << 20;
/** A frame is written this much at a time, the lock checked between (#write). */
const WRITE_CHUNK_BYTES = 1 << 20;

export interface WriterStats {
  appends: number;
  records: number;
  /** Group writes: one frame, one write call (and one datasync when fsync is on). */
  writes: number;
  fsyncs: number;
  bytes: number;
}

/** What an appender needs from its partition. */
export interface AppenderHost {
  readonly dir: string;
  readonly identity: SegmentIdentity;
  activeSegment(): Segment;
  addSegment(segment: Segment): void;
  committed(nextOffset: bigint): void;
}

export interface AppenderOptions {
  fsync: boolean;
  segmentBytes: number;
  stats: WriterStats;
  /** Throws (Fenced) unless this process still holds the log's writer lock (DirLock.check). */
  checkLock: () => void;
}

interface QueuedAppend {
  kind: 'append';
  /** The records, encoded (and so copied) when queued: append-frame.ts. */
  encoded: EncodedAppend;
  resolve: (offsets: bigint[]) => void;
  reject: (error: unknown) => void;
}

interface QueuedRoll {
  kind: 'roll';
  resolve: () => void;
  reject: (error: unknown) => void;
}

type Queued = QueuedAppend | QueuedRoll;

type Mode = { kind: 'ready' } | { kind: 'damaged' } | { kind: 'fenced'; error: RunlogError };

export class SegmentAppender {
  #host: AppenderHost;
  #fsync: boolean;
  #segmentBytes: number;
  #stats: WriterStats;
  #checkLock: () => void;
  #handle: FileHandle;
  #nextOffset: bigint;
  #queue: Queued[] = [];
  #running: Promise<void> | null = null;
  #mode: Mode = { kind: 'ready' };
  /** Set by close(): new appends are refused with it. */
  #closed: RunlogError | null = null;
  #closedCleanly = false;

  constructor(host: AppenderHost, handle: FileHandle, options: AppenderOptions) {
    this.#host = host;
    this.#handle = handle;
    this.#fsync = options.fsync;
    this.#segmentBytes = options.segmentBytes;
    this.#stats = options.stats;
    this.#checkLock = options.checkLock;
    this.#nextOffset = host.activeSegment().nextOffset;
  }

  append(records: readonly AppendRecord[]): Promise<bigint[]> {
    // Encoded now: the caller may reuse its buffers before the group is written.
    const encoded = encodeAppend(records);
    return new Promise((resolve, reject) => this.#enqueue({ kind: 'append', encoded, resolve, reject }));
  }

  /** Starts a new segment (if the active one has records), in order with queued appends. */
  roll(): Promise<void> {
    return new Promise((resolve, reject) => this.#enqueue({ kind: 'roll', resolve, reject }));
  }

  /** Waits for queued work, then closes the file. Later appends fail with Stopped. */
  async close(): Promise<void> {
    this.#closed ??= new RunlogError('Stopped', `the log of ${this.#host.dir} is closed`);
    await this.#running;
    // What a failed repair leaves, the next open's recovery cuts (a torn tail, or a roll to finish or undo).
    if (this.#mode.kind === 'damaged') await this.#repair().catch(() => undefined);
    await this.#handle.close();
    this.#closedCleanly = this.#fsync && this.#mode.kind === 'ready';
  }

  /** Closed with every append durable (fsync on) and the writer sound (no failed write left unrepaired, not fenced). */
  get closedCleanly(): boolean {
    return this.#closedCleanly;
  }

  #enqueue(item: Queued): void {
    const refusal = this.#closed ?? (this.#mode.kind === 'fenced' ? this.#mode.error : null);
    if (refusal !== null) return item.reject(refusal);
    this.#queue.push(item);
    this.#running ??= this.#drain();
  }

  async #drain(): Promise<void> {
    while (this.#queue.length > 0) {
      const group = this.#queue[0]!.kind === 'roll' ? [this.#queue.shift()!] : this.#takeGroup();
      try {
        const head = group[0]!;
        if (this.#mode.kind === 'damaged') await this.#repair();
        await (head.kind === 'roll' ? this.#rollRequested(head) : this.#commit(group as QueuedAppend[]));
      } catch (error) {
        const failure = this.#failed(error);
        for (const item of [...group, ...this.#queue.splice(0)]) item.reject(failure);
      }
    }
    this.#running = null;
  }

  /** After a failed group: fenced if the lock is lost, else damaged (the next group repairs first). */
  #failed(error: unknown): RunlogError {
    if (error instanceof RunlogError && error.code === 'Fenced') {
      this.#mode = { kind: 'fenced', error };
      return error;
    }
    if (this.#mode.kind === 'ready') this.#mode = { kind: 'damaged' };
    return unavailable(this.#host.dir, error);
  }

  #takeGroup(): QueuedAppend[] {
    const group: QueuedAppend[] = [];
    let bytes = 0;
    for (const item of this.#queue) {
      if (item.kind !== 'append' || (group.length > 0 && bytes + item.encoded.bytes > MAX_GROUP_BYTES)) break;
      group.push(item);
      bytes += item.encoded.bytes;
    }
    this.#queue.splice(0, group.length);
    return group;
  }

  async #commit(group: QueuedAppend[]): Promise<void> {
    const first = this.#nextOffset;
    const frame = groupFrame(
      group.map((item) => item.encoded),
      first,
    );
    const count = group.reduce((sum, item) => sum + item.encoded.count, 0);
    let segment = this.#host.activeSegment();
    // A segment opened unread after a clean close is sealed, not appended to (segment.ts: openedUnread).
    if (segment.hasFrames && (segment.size + frame.length > this.#segmentBytes || segment.openedUnread)) segment = await this.#roll();
    await this.#write(frame, segment.size);
    const last = first + BigInt(count - 1);
    segment.addFrame(segment.size, segment.size + frame.length, first, last);
    this.#nextOffset = last + 1n;
    this.#count(group, count, frame.length);
    this.#host.committed(this.#nextOffset);
    let next = first;
    for (const item of group) {
      item.resolve(offsetsFrom(next, item.encoded.count));
      next += BigInt(item.encoded.count);
    }
  }

  /**
   * pwrite()s the frame, then datasyncs. The write only copies into the page cache, so it
   * is made synchronously: a round trip through the libuv thread pool would cost more than
   * the copy. The datasync is what blocks on the device; it runs on the pool.
   *
   * THE LOCK DURING A WRITE. The lock is checked before the write, between its chunks and once
   * more after the datasync, before the group is answered. Its holder can be killed at any
   * moment (lock.ts), and the next opener of the log may then cut the frame being written as
   * a torn tail and write its own records at the same offsets: a group whose write outlived
   * the lock must not be answered as appended (it was, and its records were lost: a 300 MB
   * submitBatch, the holder killed during its write, 8 of 8 trials, 2026-12-07). Checked after
   * the datasync: if the holder still ran then, no other writer could have opened the log
   * before the frame was whole, and an opener after that keeps it. Checked between chunks: a
   * writer that lost the lock stops within one chunk's copy (~0.3 ms), long before the next
   * opener can have started its holder and read the log, instead of writing on over what the
   * next writer writes.
   */
  async #write(frame: Buffer, position: number): Promise<void> {
    this.#checkLock();
    const fd = this.#handle.fd;
    for (let done = 0; done < frame.length;) {
      if (done > 0) this.#checkLockWhileWriting();
      done += writeSync(fd, frame, done, Math.min(WRITE_CHUNK_BYTES, frame.length - done), position + done);
    }
    if (this.#fsync) await datasync(fd);
    this.#checkLockWhileWriting();
  }

  /** checkLock during a group's write: Fenced, saying the group's records may or may not be in the log. */
  #checkLockWhileWriting(): void {
    try {
      this.#checkLock();
    } catch (error) {
      if (!(error instanceof RunlogError) || error.code !== 'Fenced') throw error;
      const message = `${error.message}. The lock was lost while this append was written: its records may or may not be in the log (look its entries up once the log is open again)`;
      throw new RunlogError('Fenced', message, { cause: error });
    }
  }

  #count(group: QueuedAppend[], records: number, bytes: number): void {
    this.#stats.appends += group.length;
    this.#stats.records += records;
    this.#stats.writes++;
    this.#stats.bytes += bytes;
    if (this.#fsync) this.#stats.fsyncs++;
  }

  async #rollRequested(item: QueuedRoll): Promise<void> {
    if (this.#host.activeSegment().hasFrames) await this.#roll();
    item.resolve();
  }

  /** Seals the active segment and starts a new one at the next offset (the steps: segment-file.ts). */
  async #roll(): Promise<Segment> {
    this.#checkLock();
    const { segment, handle } = await createSegmentFile(this.#host.dir, this.#host.identity, this.#nextOffset, this.#fsync);
    try {
      await sealSegment(this.#handle, this.#host.activeSegment(), this.#nextOffset, this.#fsync);
      await publishSegment(segment, this.#fsync);
    } catch (error) {
      await handle.close();
      throw error;
    }
    await this.#switchTo(segment, handle);
    return segment;
  }

  async #switchTo(segment: Segment, handle: FileHandle): Promise<void> {
    const previous = this.#handle;
    this.#handle = handle;
    this.#host.addSegment(segment);
    await previous.close();
  }

  /**
   * Puts the partition back in a durable, known state after a failed write or roll: a roll
   * that got as far as renaming its new segment into place is finished; otherwise the new
   * segment's pending file is removed and the active segment is cut back to its last durable
   * frame (dropping a partial frame or seal). Until this succeeds each group fails here.
   */
  async #repair(): Promise<void> {
    this.#checkLock();
    const active = this.#host.activeSegment();
    const next = new Segment(this.#host.dir, this.#nextOffset);
    if (active.sealedEnd !== null && (await exists(next.path))) {
      const handle = await open(next.path, 'r+');
      try {
        if (this.#fsync) await syncDir(this.#host.dir);
      } catch (error) {
        await handle.close();
        throw error;
      }
      await this.#switchTo(next, handle);
    } else {
      await rm(next.path + PENDING_SUFFIX, { force: true });
      await this.#handle.truncate(active.size);
      active.sealedEnd = null;
      if (this.#fsync) await this.#handle.datasync();
    }
    this.#mode = { kind: 'ready' };
  }
}

async function exists(path: string): Promise<boolean> {
  try {
    await access(path);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
}

/** `count` consecutive offsets from `first` (one bigint each, not two, while they are safe integers). */
function offsetsFrom(first: bigint, count: number): bigint[] {
  const offsets = new Array<bigint>(count);
  if (first + BigInt(count) <= BigInt(Number.MAX_SAFE_INTEGER)) {
    const base = Number(first);
    for (let i = 0; i < count; i++) offsets[i] = BigInt(base + i);
  } else {
    for (let i = 0; i < count; i++) offsets[i] = first + BigInt(i);
  }
  return offsets;
}

function datasync(fd: number): Promise<void> {
  return new Promise((resolve, reject) => fdatasync(fd, (error) => (error ? reject(error) : resolve())));
}

function unavailable(dir: string, error: unknown): RunlogError {
  if (error instanceof RunlogError) return error;
  return new RunlogError('LogUnavailable', `writing the log in ${dir} failed: ${String(error)} (the next append tries again)`, {
    cause: error,
  });
}
