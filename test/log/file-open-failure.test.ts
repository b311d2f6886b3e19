/**
 * An open that fails leaves the directory as it found it (no LOCK, no log.json, no partition
 * directory or segment it created, not even the directory itself if it made it) and says why
 * with a RunlogError; partition counts above a backend's maximum are refused before anything
 * is written.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdir, readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { isRunlogError } from '../../src/errors.ts';
import { openFileLog } from '../../src/log/file/file-log.ts';
import { openKafkaLog } from '../../src/log/kafka/kafka-log.ts';
import { MAX_PARTITIONS } from '../../src/log/log-arguments.ts';
import { openMemoryLog } from '../../src/log/memory/memory-log.ts';
import { openRunQueue } from '../../src/queue/open-run-queue.ts';
import { scratchDir } from '../support/cleanup.ts';

const child = fileURLToPath(new URL('./open-child.ts', import.meta.url));

async function parent(t: TestContext): Promise<string> {
  const dir = await scratchDir(t, 'runlog-open-failure-');
  return dir;
}

/** Every file under `dir` with its bytes (hex), and every directory: what "as it was" means. */
async function snapshot(dir: string): Promise<Record<string, string>> {
  const tree: Record<string, string> = {};
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    const path = join(entry.parentPath ?? entry.path, entry.name);
    tree[path] = entry.isDirectory() ? 'dir' : (await readFile(path)).toString('hex');
  }
  return tree;
}

/** Opens the file log in a child process limited to `maxFiles` descriptors (ulimit -n); its answer. */
async function openLimited(
  dir: string,
  partitions: number,
  maxFiles: number,
): Promise<{ opened: boolean; code?: string; message?: string }> {
  const script = `ulimit -n ${maxFiles} && exec "$0" --import tsx "$1" "$2" "$3"`;
  const { stdout } = await promisify(execFile)('/bin/sh', ['-c', script, process.execPath, child, dir, String(partitions)]);
  return JSON.parse(stdout) as { opened: boolean; code?: string; message?: string };
}

const tooMany = (max: number) => (e: unknown) =>
  isRunlogError(e, 'InvalidArgument') && e.message.includes(String(max)) && /partitions/.test(e.message);

describe('a failed open leaves nothing behind', () => {
  it('partition counts above each backend maximum are refused before anything is written', async (t) => {
    const base = await parent(t);
    const dir = join(base, 'log');
    await assert.rejects(openFileLog({ dir, partitions: MAX_PARTITIONS.file + 1 }), tooMany(MAX_PARTITIONS.file));
    await assert.rejects(openRunQueue({ log: { kind: 'file', dir }, partitions: 2000 }), tooMany(MAX_PARTITIONS.file));
    assert.deepEqual(await readdir(base), [], 'nothing was created');
    await assert.rejects(openMemoryLog({ partitions: MAX_PARTITIONS.memory + 1 }), tooMany(MAX_PARTITIONS.memory));
    // Refused before connecting: no broker is needed to learn that.
    await assert.rejects(
      openKafkaLog({ brokers: ['127.0.0.1:1'], topic: 'never', partitions: MAX_PARTITIONS.kafka + 1 }),
      tooMany(MAX_PARTITIONS.kafka),
    );
    const log = await openFileLog({ dir, partitions: MAX_PARTITIONS.file, fsync: false, onWarning: () => {} });
    assert.equal(log.partitions, MAX_PARTITIONS.file);
    await log.close();
  });

  it('out of file descriptors (EMFILE) on a new log: LogUnavailable saying so, and no directory, LOCK, log.json or partition left', async (t) => {
    const base = await parent(t);
    const answer = await openLimited(join(base, 'log'), 100, 64);
    assert.equal(answer.opened, false);
    assert.equal(answer.code, 'LogUnavailable');
    assert.match(answer.message!, /EMFILE.*ulimit -n/);
    assert.deepEqual(await readdir(base), []);
    await mkdir(join(base, 'empty'));
    await writeFile(join(base, 'empty', 'notes.txt'), 'mine');
    const before = await snapshot(base);
    assert.equal((await openLimited(join(base, 'empty'), 100, 64)).code, 'LogUnavailable');
    assert.deepEqual(await snapshot(base), before);
  });

  it('out of file descriptors on an existing log: every file as it was, and the log opens again where descriptors suffice', async (t) => {
    const dir = join(await parent(t), 'log');
    const log = await openFileLog({ dir, partitions: 100, onWarning: () => {} });
    await log.append(7, [{ key: 'k', value: new TextEncoder().encode('v') }]);
    await log.close();
    const before = await snapshot(dir);
    const answer = await openLimited(dir, 100, 64);
    assert.equal(answer.code, 'LogUnavailable');
    assert.match(answer.message!, /EMFILE/);
    assert.deepEqual(await snapshot(dir), before);
    assert.deepEqual(await openLimited(dir, 100, 1024), { opened: true });
  });
});
