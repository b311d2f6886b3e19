/**
 * Helpers for tests of the clean close (src/log/file/recovery.ts: CLEAN CLOSE): records whose
 * frames vary in size, read back to compare; the reached record as JSON, to look at and edit;
 * and a probe that tells, on a copy of a log, whether an open reads its active segment or trusts
 * it as a clean close left it.
 */
import assert from 'node:assert/strict';
import { cp, open, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { isRunlogError } from '../../src/errors.ts';
import type { LogRecord } from '../../src/log/event-log.ts';
import { openFileLog, type FileLog } from '../../src/log/file/file-log.ts';
import { SEGMENT_HEADER_BYTES } from '../../src/log/file/segment-header.ts';
import { collect, rec, text } from '../contract/log-records.ts';
import { scratchDir } from '../support/cleanup.ts';
import { segmentPaths } from './file-damage.ts';

/** A record as written, or as read back: comparable with deepEqual. */
export interface Written {
  offset: bigint;
  key: string;
  value: string | null;
}

export function asWritten(records: readonly LogRecord[]): Written[] {
  return records.map((r) => ({ offset: r.offset, key: r.key, value: text(r) }));
}

/** The same numbers every run: a test that fails, fails again. */
export function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

/**
 * Appends `count` records to `partition` in appends of 1 to 4 records, 8 appends in flight at a
 * time (so frames vary in size and several appends share a group), values of 40 to 440 bytes,
 * every 13th a tombstone. Keys are `<prefix>/<i mod keys>`. Answers what was acknowledged, in
 * offset order.
 */
export async function appendMany(log: FileLog, count: number, prefix: string, keys = count, partition = 0): Promise<Written[]> {
  const random = seeded(count * 31 + prefix.length);
  const appends: Written[][] = [];
  for (let i = 0; i < count;) {
    const size = Math.min(count - i, 1 + Math.floor(random() * 4));
    appends.push(
      Array.from({ length: size }, (_, j) => {
        const n = i + j;
        const value = n % 13 === 12 ? null : `${prefix}:${n}:`.padEnd(40 + Math.floor(random() * 400), 'v');
        return { offset: -1n, key: `${prefix}/${n % keys}`, value };
      }),
    );
    i += size;
  }
  const written: Written[] = [];
  for (let at = 0; at < appends.length; at += 8) {
    const batch = appends.slice(at, at + 8);
    const offsets = await Promise.all(
      batch.map((records) =>
        log.append(
          partition,
          records.map((r) => rec(r.key, r.value)),
        ),
      ),
    );
    batch.forEach((records, i) => records.forEach((r, j) => written.push({ ...r, offset: offsets[i]![j]! })));
  }
  return written.sort((a, b) => (a.offset < b.offset ? -1 : 1));
}

/** Every record of `partition` from `from` (at most `maxRecords`), as written. */
export async function readBack(log: FileLog, from = 0n, maxRecords?: number, partition = 0): Promise<Written[]> {
  return asWritten(await collect(log.read(partition, from, maxRecords === undefined ? undefined : { maxRecords })));
}

/** What a read from `from` of at most `maxRecords` must answer, given everything the log holds. */
export function slice(all: readonly Written[], from: bigint, maxRecords: number): Written[] {
  return all.filter((r) => r.offset >= from).slice(0, maxRecords);
}

export function recordPath(dir: string, partition = 0): string {
  return join(dir, `reached-${partition}.json`);
}

/** Partition `partition`'s reached record, parsed. */
export async function readRecord(dir: string, partition = 0): Promise<Record<string, unknown>> {
  return JSON.parse(await readFile(recordPath(dir, partition), 'utf8')) as Record<string, unknown>;
}

export async function writeRecord(dir: string, record: Record<string, unknown>, partition = 0): Promise<void> {
  await writeFile(recordPath(dir, partition), JSON.stringify(record) + '\n');
}

/** The `clean` a record holds (undefined: none). */
export interface CleanField {
  segment: string;
  bytes: number;
  lastFrame: number;
}

export function cleanOf(record: Record<string, unknown>): CleanField | undefined {
  return record['clean'] as CleanField | undefined;
}

/**
 * Whether an open of `dir` as it is now (writable, or read-only) trusts partition 0's last
 * segment unread, as a clean close left it. Asked of a copy (`dir` is not touched) whose last
 * segment's first frame is damaged: an open that scans the segment refuses the copy (Corrupt:
 * a damaged frame followed by a valid one), an open that trusts it does not read that frame.
 * The segment must hold two frames at least (the last one is read either way).
 */
export async function opensUnread(t: TestContext, dir: string, readOnly: boolean): Promise<boolean> {
  const copy = await scratchDir(t, 'runlog-clean-probe-');
  await cp(dir, copy, { recursive: true, filter: (path) => !path.endsWith('/LOCK') });
  const segment = (await segmentPaths(join(copy, 'partition-0'))).at(-1)!;
  const handle = await open(segment, 'r+');
  try {
    const { size } = await handle.stat();
    const header = Buffer.alloc(12);
    await handle.read(header, 0, 12, SEGMENT_HEADER_BYTES);
    const firstEnd = SEGMENT_HEADER_BYTES + 12 + header.readUInt32LE(8);
    assert.ok(firstEnd < size, `${segment} holds one frame or none: the probe needs two`);
    const byte = Buffer.alloc(1);
    await handle.read(byte, 0, 1, firstEnd - 1);
    byte[0] = byte[0]! ^ 0xff;
    await handle.write(byte, 0, 1, firstEnd - 1);
  } finally {
    await handle.close();
  }
  try {
    await (await openFileLog({ dir: copy, readOnly, onWarning: () => {} })).close();
    return true;
  } catch (error) {
    if (isRunlogError(error, 'Corrupt') && error.message.includes(segment)) return false;
    throw error;
  }
}
