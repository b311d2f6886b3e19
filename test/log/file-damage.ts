/** Helpers for tests that damage a file log on disk. */
import assert from 'node:assert/strict';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { isRunlogError } from '../../src/errors.ts';
import { openFileLog, type FileLog } from '../../src/log/file/file-log.ts';
import { FRAME_HEADER_BYTES } from '../../src/log/file/frame.ts';
import { SEGMENT_HEADER_BYTES } from '../../src/log/file/segment-header.ts';
import { collect, rec } from '../contract/log-records.ts';

/** The segment files of a partition directory, in offset order. */
export async function segmentPaths(partitionDir: string): Promise<string[]> {
  return (await readdir(partitionDir))
    .filter((name) => name.endsWith('.log'))
    .sort()
    .map((name) => join(partitionDir, name));
}

/** Every file under `dir` with its bytes (hex), to show that something wrote nothing. */
export async function filesUnder(dir: string): Promise<Map<string, string>> {
  const files = new Map<string, string>();
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (entry.isFile()) {
      const path = join(entry.parentPath ?? entry.path, entry.name);
      files.set(path, (await readFile(path)).toString('hex'));
    }
  }
  return files;
}

export const SMALL_SEGMENTS = 300;

/** A closed log in `dir` of `partitions` partitions, `perPartition` one-record appends each, over many small segments. */
export async function writeLog(dir: string, partitions = 1, perPartition = 24): Promise<void> {
  const log = await openFileLog({ dir, partitions, segmentBytes: SMALL_SEGMENTS, onWarning: () => {} });
  for (let p = 0; p < partitions; p++)
    for (let i = 0; i < perPartition; i++) await log.append(p, [rec(`k${i}`, `partition ${p} value ${i}`)]);
  await log.close();
}

export async function keysOf(log: FileLog, partition = 0): Promise<string[]> {
  return (await collect(log.read(partition, 0n))).map((r) => r.key);
}

export async function flipByte(path: string, at: number): Promise<void> {
  const bytes = await readFile(path);
  bytes[at] = bytes[at]! ^ 0xff;
  await writeFile(path, bytes);
}

/** Flips a byte inside `text`'s first occurrence in the file at `path`; returns where the frame holding it starts. */
export async function damageFrameHolding(path: string, text: string): Promise<number> {
  const bytes = await readFile(path);
  const at = bytes.indexOf(text);
  assert.ok(at > 0, `${path} holds ${text}`);
  let frame = SEGMENT_HEADER_BYTES;
  while (frame + FRAME_HEADER_BYTES + bytes.readUInt32LE(frame + 8) <= at) frame += FRAME_HEADER_BYTES + bytes.readUInt32LE(frame + 8);
  await flipByte(path, at);
  return frame;
}

/** Corrupt, naming `path` and the byte where its damaged frame starts. */
export function corruptAt(path: string, byte: number): (error: unknown) => boolean {
  return (error) => {
    assert.ok(isRunlogError(error, 'Corrupt'), `expected Corrupt, got ${String(error)}`);
    assert.ok(error.message.includes(`${path}: bad frame at byte ${byte}`), error.message);
    return true;
  };
}
