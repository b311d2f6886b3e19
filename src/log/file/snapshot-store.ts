/**
 * Snapshots beside the file log (snapshot-store.ts of the log layer says what a store is):
 *
 *   <dir>/snapshots/partition-<n>/<nextOffset, 20 digits>-<anchor>.snapshot   a snapshot, named by the offset it covers up to
 *                                                     and the anchor of the last record it covers (record-anchor.ts)
 *   <dir>/snapshots/partition-<n>/compacted           the compaction horizon (below)
 *
 * A snapshot is written to `<name>.tmp`, fsync'd, renamed into place and the directory
 * fsync'd, so a crash leaves either the whole file or none (a `.tmp` left behind is removed
 * by the next save). The two newest are kept: if the newest is damaged, the one before serves.
 * A name without an anchor (`<nextOffset>.snapshot`: a snapshot of no record, or one saved before
 * snapshots had anchors) is read as it always was.
 *
 * Compaction drops tombstones at the first compaction that finds them (compaction.ts), so a
 * snapshot covering records below N misses the tombstones at N or later of any compaction
 * that then ran past N: the entries they pruned would stay in its view. Before compaction
 * rewrites anything it records its horizon (the offset below which it compacts) in
 * `compacted`; a snapshot covering less than the horizon is stale. Recording first errs on
 * the safe side: a compaction that fails after it only makes older snapshots unused.
 * The store writes only under the log's lock (only a writable log has one), and checks it before
 * a snapshot is written and again before it is renamed into place: a writer that lost the lock
 * (its holder killed) may no longer read what the log holds, so a snapshot it took must not be
 * published for the next writer to trust.
 */
import { readSync } from 'node:fs';
import { mkdir, open, readdir, readFile, rename, rm, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { RunlogError } from '../../errors.ts';
import type { OpenSnapshot, SnapshotStore, StoredSnapshot } from '../snapshot-store.ts';
import { ANCHOR_PATTERN } from '../record-anchor.ts';
import { syncDir } from './sync.ts';

const SUFFIX = '.snapshot';
const HORIZON_FILE = 'compacted';
const KEEP = 2;

/** A snapshot's file name: its offset (group 1), then its anchor if it has one (group 2). */
const SNAPSHOT_NAME = /^(\d{20})(?:-([0-9a-f]{16}))?\.snapshot$/;

export class FileSnapshotStore implements SnapshotStore {
  readonly logId: string;
  readonly keepsAnchors = true;

  /** `checkLock` throws (Fenced) once this process no longer holds the log's writer lock (lock.ts). */
  constructor(
    private readonly dir: string,
    logId: string,
    private readonly fsync: boolean,
    private readonly checkLock: () => void,
  ) {
    this.logId = `file:${logId}`;
  }

  #partitionDir(partition: number): string {
    return join(this.dir, 'snapshots', `partition-${partition}`);
  }

  async save(partition: number, bytes: Uint8Array, nextOffset: bigint, anchor: string | null = null): Promise<void> {
    this.checkLock();
    if (anchor !== null && !ANCHOR_PATTERN.test(anchor)) throw new RangeError(`not a record anchor: ${JSON.stringify(anchor)}`);
    const dir = this.#partitionDir(partition);
    await mkdir(dir, { recursive: true });
    const name = `${nextOffset.toString().padStart(20, '0')}${anchor === null ? '' : `-${anchor}`}${SUFFIX}`;
    await this.#writeAtomically(dir, name, bytes, this.fsync);
    // Older ones beyond the KEEP newest go, and one of the same offset under another anchor (or none) with them.
    const others = (await this.#names(dir)).filter((file) => file !== name);
    const kept = others.filter((file) => file.slice(0, 20) !== name.slice(0, 20)).slice(0, KEEP - 1);
    for (const file of others) if (!kept.includes(file)) await rm(join(dir, file), { force: true });
    // Only a snapshot's: compacting() writes the horizon through compacted.tmp, maybe at this moment.
    for (const file of await readdir(dir)) if (file.endsWith(`${SUFFIX}.tmp`)) await rm(join(dir, file), { force: true });
  }

  async discard(partition: number, name: string): Promise<void> {
    this.checkLock();
    const dir = this.#partitionDir(partition);
    if (!(await this.#names(dir)).some((file) => join(dir, file) === name)) return; // only a snapshot list() named
    await rm(name, { force: true });
    if (this.fsync) await syncDir(dir);
  }

  async list(partition: number): Promise<StoredSnapshot[]> {
    const dir = this.#partitionDir(partition);
    return (await this.#names(dir)).map((file) => {
      const anchor = SNAPSHOT_NAME.exec(file)![2];
      return {
        name: join(dir, file),
        read: () => readFile(join(dir, file)),
        open: () => openSnapshotFile(join(dir, file)),
        ...(anchor === undefined ? {} : { anchor }),
      };
    });
  }

  async staleness(partition: number): Promise<(nextOffset: bigint, takenAt: number) => string | null> {
    const horizon = await this.#horizon(partition);
    return (nextOffset) =>
      nextOffset < horizon
        ? `a compaction ran up to offset ${horizon} since it was taken (covering offsets below ${nextOffset}), and may have dropped tombstones it did not see`
        : null;
  }

  /** Called by compaction before it rewrites anything: it will compact the records below `horizon`. */
  async compacting(partition: number, horizon: bigint): Promise<void> {
    this.checkLock();
    if (horizon <= (await this.#horizon(partition))) return;
    const dir = this.#partitionDir(partition);
    await mkdir(dir, { recursive: true });
    await this.#writeAtomically(dir, HORIZON_FILE, Buffer.from(`${horizon}\n`), true); // always durable: it guards correctness
  }

  /** The partition's compaction horizon (0: never compacted); unreadable, every snapshot is stale. */
  async #horizon(partition: number): Promise<bigint> {
    let text: string;
    try {
      text = await readFile(join(this.#partitionDir(partition), HORIZON_FILE), 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 0n;
      throw error;
    }
    return /^\d{1,20}\n$/.test(text) ? BigInt(text.trim()) : BigInt(Number.MAX_SAFE_INTEGER);
  }

  /** Snapshot file names, newest first. */
  async #names(dir: string): Promise<string[]> {
    let names: string[];
    try {
      names = await readdir(dir);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw error;
    }
    // Newest first: by offset (a name's first 20 characters), not by the whole name.
    const offsetOf = (name: string): string => name.slice(0, 20);
    return names
      .filter((name) => SNAPSHOT_NAME.test(name))
      .sort((a, b) => (offsetOf(a) < offsetOf(b) ? 1 : offsetOf(a) > offsetOf(b) ? -1 : 0));
  }

  async #writeAtomically(dir: string, name: string, bytes: Uint8Array, sync: boolean): Promise<void> {
    const temporary = join(dir, `${name}.tmp`);
    const handle = await open(temporary, 'w');
    try {
      await writeInChunks(handle, bytes, sync);
      if (sync) await handle.sync();
    } finally {
      await handle.close();
    }
    this.checkLock(); // the rename publishes it: not once the lock is lost
    await rename(temporary, join(dir, name));
    if (sync) await syncDir(dir);
  }
}

/** How much of a snapshot file is written before it is made durable, and the next written. */
const WRITE_CHUNK = 1 << 20;

/**
 * Writes `bytes` from the file's start, a chunk at a time, each datasynced before the next is
 * written when `sync`. On ext4 (data=ordered) the log's own fdatasync after an append commits
 * the journal, which first writes out every file's dirty data: a snapshot of several MB written
 * whole and synced once made the appends of that moment wait 10-20 ms for it. A chunk at a time,
 * an append waits for at most one chunk.
 */
async function writeInChunks(handle: FileHandle, bytes: Uint8Array, sync: boolean): Promise<void> {
  for (let at = 0; at < bytes.length; at += WRITE_CHUNK) {
    const chunk = bytes.subarray(at, at + WRITE_CHUNK);
    for (let done = 0; done < chunk.length;) done += (await handle.write(chunk, done, chunk.length - done, at + done)).bytesWritten;
    if (sync && at + WRITE_CHUNK < bytes.length) await handle.datasync();
  }
}

/**
 * A snapshot file opened to be read by position (src/events/snapshot-stream.ts), synchronously:
 * its reader runs in one turn, as the restore it feeds does.
 */
async function openSnapshotFile(path: string): Promise<OpenSnapshot> {
  const handle = await open(path, 'r');
  try {
    const { size } = await handle.stat();
    const read = (into: Uint8Array, position: number): void => {
      for (let done = 0; done < into.length;) {
        const got = readSync(handle.fd, into, done, into.length - done, position + done);
        if (got === 0)
          throw new RunlogError(
            'Corrupt',
            `${path}: ends at byte ${position + done}, before the ${into.length} bytes wanted at ${position}`,
          );
        done += got;
      }
    };
    return { size, read, fd: handle.fd, close: () => handle.close() };
  } catch (error) {
    await handle.close();
    throw error;
  }
}
