/**
 * The "reached" records (src/log/file/reached.ts): a partition cut back at a frame
 * boundary, or rolled back to an older copy, is Corrupt on every open (writable,
 * read-only, the CLI), never a shorter log, and nothing is written; a crash's genuine torn
 * tail still opens. Real files, a real SIGKILLed writer process.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { cp, mkdir, readFile, rm, stat, truncate, watch, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { isRunlogError } from '../../src/errors.ts';
import { openFileLog, type FileLogOptions } from '../../src/log/file/file-log.ts';
import { SEGMENT_HEADER_BYTES } from '../../src/log/file/segment-header.ts';
import { openRunQueue } from '../../src/queue/open-run-queue.ts';
import type { RunlogWarning } from '../../src/warnings.ts';
import { rec } from '../contract/log-records.ts';
import { filesUnder, keysOf, segmentPaths, writeLog } from './file-damage.ts';
import { onCleanup, scratchDir } from '../support/cleanup.ts';

const CRASH_WRITER = join(import.meta.dirname, 'crash-writer.ts');
const CLI = join(import.meta.dirname, '../../src/cli/runlog.ts');

/** Where partition `partition`'s record lives (reached.ts), spelled out so the test does not lean on the code under test. */
function reachedPath(dir: string, partition: number): string {
  return join(dir, `reached-${partition}.json`);
}

/**
 * Both opens (writable, then read-only) fail with Corrupt naming the partition, the
 * recorded end and the end found, and write nothing.
 */
async function refusedAsShorter(
  dir: string,
  partition: number,
  recorded: bigint,
  found: bigint,
  options: Partial<FileLogOptions> = {},
): Promise<void> {
  const before = await filesUnder(dir);
  for (const readOnly of [false, true]) {
    await assert.rejects(openFileLog({ dir, readOnly, onWarning: () => {}, ...options }), (error) => {
      assert.ok(isRunlogError(error, 'Corrupt'), String(error));
      assert.match(
        error.message,
        new RegExp(`partition ${partition} ends at offset ${found}, but .*reached-${partition}\\.json records that it reached ${recorded}`),
      );
      return true;
    });
    assert.deepEqual(await filesUnder(dir), before, `the ${readOnly ? 'read-only' : 'writable'} open wrote nothing`);
  }
}

describe('file log: a partition shorter than it reached is Corrupt', () => {
  it('a clean close, then the active segment cut back at a frame boundary', async (t) => {
    const dir = await scratchDir(t, 'runlog-reached-');
    const log = await openFileLog({ dir, onWarning: () => {} });
    await log.append(0, [rec('a', '1'), rec('b', '2')]);
    const segment = (await segmentPaths(join(dir, 'partition-0'))).at(-1)!;
    const afterFirst = (await stat(segment)).size;
    await log.append(0, [rec('c', '3')]);
    await log.close();
    await truncate(segment, afterFirst);
    await refusedAsShorter(dir, 0, 3n, 2n);
  });

  it('a clean close, then the active segment cut into its last frame: Corrupt, not a torn tail cut', async (t) => {
    const dir = await scratchDir(t, 'runlog-reached-');
    const log = await openFileLog({ dir, onWarning: () => {} });
    await log.append(0, [rec('a', '1')]);
    await log.append(0, [rec('b', '2')]);
    await log.close();
    const segment = (await segmentPaths(join(dir, 'partition-0'))).at(-1)!;
    await truncate(segment, (await stat(segment)).size - 3);
    await refusedAsShorter(dir, 0, 2n, 1n);
  });

  it('the last of many segments truncated to its header', async (t) => {
    const dir = await scratchDir(t, 'runlog-reached-');
    await writeLog(dir);
    const segments = await segmentPaths(join(dir, 'partition-0'));
    assert.ok(segments.length > 2);
    const base = BigInt(segments.at(-1)!.slice(-24, -4));
    await truncate(segments.at(-1)!, SEGMENT_HEADER_BYTES);
    await refusedAsShorter(dir, 0, 24n, base);
  });

  it('a partition directory rolled back to an older copy', async (t) => {
    const dir = await scratchDir(t, 'runlog-reached-');
    const backup = await scratchDir(t, 'runlog-reached-');
    const log = await openFileLog({ dir, partitions: 2, onWarning: () => {} });
    await log.append(1, [rec('a', '1')]);
    await log.close();
    await cp(join(dir, 'partition-1'), join(backup, 'partition-1'), { recursive: true });
    const again = await openFileLog({ dir, onWarning: () => {} });
    await again.append(1, [rec('b', '2'), rec('c', '3')]);
    await again.close();
    await rm(join(dir, 'partition-1'), { recursive: true });
    await cp(join(backup, 'partition-1'), join(dir, 'partition-1'), { recursive: true });
    await refusedAsShorter(dir, 1, 3n, 1n);
  });

  it('a queue whose log was cut back does not open: no closed entry reads open, no acknowledged ticket id is reissued', async (t) => {
    const dir = await scratchDir(t, 'runlog-reached-');
    const queue = await openRunQueue({ log: { kind: 'file', dir }, onWarning: () => {} });
    await queue.submit({ tenant: 'acme', thread: 't1', agent: 'billing', input: 'first' });
    const segment = (await segmentPaths(join(dir, 'partition-0'))).at(-1)!;
    const afterFirst = (await stat(segment)).size;
    await queue.submit({ tenant: 'acme', thread: 't2', agent: 'billing', input: 'second' });
    const taken = (await queue.take({ agents: ['billing'], holder: 'w', ttlMs: 60_000 }))!;
    await queue.startAttempt(taken.lease, 'run-1');
    await queue.close(taken.lease, { status: 'succeeded', result: 'done' });
    await queue.stop();
    await truncate(segment, afterFirst);
    await assert.rejects(openRunQueue({ log: { kind: 'file', dir }, onWarning: () => {} }), (error) => isRunlogError(error, 'Corrupt'));
  });

  it('the command line (a read-only open) refuses a cut-back log and writes nothing', async (t) => {
    const dir = await scratchDir(t, 'runlog-reached-');
    const log = await openFileLog({ dir, onWarning: () => {} });
    await log.append(0, [rec('a', '1')]);
    const segment = (await segmentPaths(join(dir, 'partition-0'))).at(-1)!;
    const afterFirst = (await stat(segment)).size;
    await log.append(0, [rec('b', '2')]);
    await log.close();
    await truncate(segment, afterFirst);
    const before = await filesUnder(dir);
    const run = spawnSync(process.execPath, ['--import', 'tsx', CLI, 'replay', '--dir', dir], { encoding: 'utf8' });
    assert.equal(run.status, 1, `a damaged log is a refusal (exit 1): ${run.stdout}`);
    assert.match(run.stderr, /Corrupt: .*partition 0 ends at offset 1, but .* records that it reached 2/);
    assert.deepEqual(await filesUnder(dir), before);
  });

  it(
    'after a SIGKILLed writer that appended past a record refresh: its torn tail opens, a cut back below the record is Corrupt',
    { timeout: 60_000 },
    async (t) => {
      const dir = await scratchDir(t, 'runlog-reached-');
      const child = spawn(process.execPath, ['--import', 'tsx', CRASH_WRITER, dir], { stdio: ['ignore', 'ignore', 'pipe'] });
      const exited = once(child, 'exit');
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      onCleanup(t, () => child.kill('SIGKILL'));
      const recorded = await firstRecord(dir);
      child.kill('SIGKILL');
      const [code, signal] = await exited;
      assert.equal(signal, 'SIGKILL', `the writer ended by itself (code ${code}): ${stderr}`);
      assert.ok(recorded > 0n);

      // The crash's own state opens (a torn last frame, if any, is cut: RUNLOG_TORN_TAIL), at or past the record.
      const warnings: RunlogWarning[] = [];
      const reopened = await openFileLog({ dir, onWarning: (w) => warnings.push(w) });
      assert.ok(
        warnings.every((w) => w.code === 'RUNLOG_TORN_TAIL' || w.code === 'RUNLOG_STALE_LOCK'),
        JSON.stringify(warnings),
      );
      const end = await reopened.endOffset(0);
      assert.ok(end >= recorded);
      await reopened.close();
      assert.equal(recordedEnd(await readFile(reachedPath(dir, 0), 'utf8')), end, 'the clean close records the end');

      const segment = (await segmentPaths(join(dir, 'partition-0'))).at(-1)!;
      await truncate(segment, SEGMENT_HEADER_BYTES);
      await refusedAsShorter(dir, 0, end, 0n);
    },
  );

  it('a record that cannot be written is a warning: appends and close succeed', async (t) => {
    const dir = await scratchDir(t, 'runlog-reached-');
    const warnings: RunlogWarning[] = [];
    const log = await openFileLog({ dir, onWarning: (w) => warnings.push(w) });
    await mkdir(join(reachedPath(dir, 0), 'in-the-way'), { recursive: true }); // a directory where the record goes
    assert.deepEqual(await log.append(0, [rec('a', '1')]), [0n]);
    await log.close();
    // The close's attempt at least (a background refresh may have tried before it).
    assert.ok(warnings.length > 0 && warnings.every((w) => w.code === 'RUNLOG_REACHED_RECORD'), JSON.stringify(warnings));
    assert.match(warnings.at(-1)!.message, /reached-0\.json: recording that partition 0 reached offset 1 failed/);
    await rm(reachedPath(dir, 0), { recursive: true });
    const again = await openFileLog({ dir, onWarning: () => {} });
    onCleanup(t, () => again.close());
    assert.deepEqual(await keysOf(again), ['a']);
  });
});

describe('file log: a malformed clean field of a reached record is Corrupt', () => {
  /** How each row changes a clean close's `clean` (its real value given), and the field the refusal names. */
  const rows: Array<[string, (clean: Record<string, unknown>) => unknown, string]> = [
    ['null', () => null, 'clean'],
    ['an array', (c) => [c['segment'], c['bytes'], c['lastFrame']], 'clean'],
    ['a string', () => 'clean', 'clean'],
    ['a number', () => 1, 'clean'],
    ['an empty object', () => ({}), 'clean.segment'],
    ['segment a number', (c) => ({ ...c, segment: 0 }), 'clean.segment'],
    ['segment negative', (c) => ({ ...c, segment: '-1' }), 'clean.segment'],
    ['segment with a leading zero', (c) => ({ ...c, segment: '00' }), 'clean.segment'],
    ['segment not a number', (c) => ({ ...c, segment: 'zero' }), 'clean.segment'],
    ['segment empty', (c) => ({ ...c, segment: '' }), 'clean.segment'],
    ['bytes missing', (c) => ({ ...c, bytes: undefined }), 'clean.bytes'],
    ['bytes negative', (c) => ({ ...c, bytes: -1 }), 'clean.bytes'],
    ['bytes not an integer', (c) => ({ ...c, bytes: (c['bytes'] as number) + 0.5 }), 'clean.bytes'],
    ['bytes a string', (c) => ({ ...c, bytes: String(c['bytes']) }), 'clean.bytes'],
    ['bytes null', (c) => ({ ...c, bytes: null }), 'clean.bytes'],
    ['bytes past 2^53', (c) => ({ ...c, bytes: 2 ** 60 }), 'clean.bytes'],
    ['lastFrame missing', (c) => ({ ...c, lastFrame: undefined }), 'clean.lastFrame'],
    ['lastFrame negative', (c) => ({ ...c, lastFrame: -1 }), 'clean.lastFrame'],
    ['lastFrame not an integer', (c) => ({ ...c, lastFrame: (c['lastFrame'] as number) + 0.5 }), 'clean.lastFrame'],
    ['lastFrame a string', (c) => ({ ...c, lastFrame: String(c['lastFrame']) }), 'clean.lastFrame'],
    ['lastFrame past bytes', (c) => ({ ...c, lastFrame: (c['bytes'] as number) + 1 }), 'clean.lastFrame'],
  ];
  for (const [name, malformed, field] of rows) {
    it(`${name}: both opens refuse it naming the file and ${field}, and write nothing`, async (t) => {
      const dir = await scratchDir(t, 'runlog-reached-');
      const log = await openFileLog({ dir, onWarning: () => {} });
      await log.append(0, [rec('a', '1')]);
      await log.append(0, [rec('b', '2')]);
      await log.close();
      const record = JSON.parse(await readFile(reachedPath(dir, 0), 'utf8')) as Record<string, unknown>;
      const clean = record['clean'] as Record<string, unknown>;
      assert.equal(typeof clean, 'object', 'a clean close records clean');
      await writeFile(reachedPath(dir, 0), JSON.stringify({ ...record, clean: malformed(clean) }));
      const before = await filesUnder(dir);
      for (const readOnly of [false, true]) {
        await assert.rejects(openFileLog({ dir, readOnly, onWarning: () => {} }), (error) => {
          assert.ok(isRunlogError(error, 'Corrupt'), String(error));
          assert.ok(error.message.includes(reachedPath(dir, 0)), error.message);
          assert.match(error.message, new RegExp(`: ${field.replace('.', '\\.')} .* is not `));
          return true;
        });
        assert.deepEqual(await filesUnder(dir), before, `the ${readOnly ? 'read-only' : 'writable'} open wrote nothing`);
      }
    });
  }
});

function recordedEnd(text: string): bigint {
  return BigInt((JSON.parse(text) as { end: string }).end);
}

/** The end named by the first record the writer in `dir` writes (waits for it to appear). */
async function firstRecord(dir: string): Promise<bigint> {
  const read = async (): Promise<bigint | null> => {
    try {
      return recordedEnd(await readFile(reachedPath(dir, 0), 'utf8'));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
  };
  await waitFor(
    () =>
      stat(join(dir, 'partition-0')).then(
        () => true,
        () => false,
      ),
    dir,
  );
  const controller = new AbortController();
  const watcher = watch(dir, { signal: controller.signal });
  try {
    const now = await read();
    if (now !== null) return now;
    for await (const _event of watcher) {
      const found = await read();
      if (found !== null) return found;
    }
    throw new Error('the watch ended');
  } finally {
    controller.abort();
  }
}

/** Waits until `ready()` (the writer's log exists), watching `dir` for changes. */
async function waitFor(ready: () => Promise<boolean>, dir: string): Promise<void> {
  const controller = new AbortController();
  const watcher = watch(dir, { signal: controller.signal });
  try {
    if (await ready()) return;
    for await (const _event of watcher) if (await ready()) return;
  } finally {
    controller.abort();
  }
}
