import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { openFileLog, type FileLog, type FileLogOptions } from '../../src/log/file/file-log.ts';
import { eventLogContract } from '../contract/event-log.contract.ts';

async function tempDir(t: TestContext): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'runlog-file-log-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** Opens a file log in a fresh directory, closed and removed after the test. */
async function openTemp(t: TestContext, options: Omit<FileLogOptions, 'dir'>): Promise<FileLog> {
  const dir = await tempDir(t);
  const log = await openFileLog({ dir, ...options });
  t.after(() => log.close());
  return log;
}

eventLogContract('file', (partitions, t) => openTemp(t, { partitions }));
eventLogContract('file (tiny segments, no fsync)', (partitions, t) => openTemp(t, { partitions, segmentBytes: 64, fsync: false }));
