/**
 * The file log proves it is whole: every piece missing, extra, renamed or edited is
 * Corrupt naming the file (never a shorter log), and the one repair it makes on its own, a
 * torn last frame cut on open, is reported. Real files in a temporary directory.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { appendFile, mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { createInterface } from 'node:readline';
import { describe, it, type TestContext } from 'node:test';
import { isRunlogError, type ErrorCode } from '../../src/errors.ts';
import { openFileLog, type FileLog, type FileLogOptions } from '../../src/log/file/file-log.ts';
import { encodeSeal } from '../../src/log/file/frame.ts';
import { encodeSegmentHeader } from '../../src/log/file/segment-header.ts';
import { openRunQueue } from '../../src/queue/open-run-queue.ts';
import type { RunlogWarning } from '../../src/warnings.ts';
import { collect, rec } from '../contract/log-records.ts';
import { SMALL_SEGMENTS, filesUnder, keysOf, segmentPaths, writeLog } from './file-damage.ts';
import { onCleanup, scratchDir } from '../support/cleanup.ts';

const CRASH_WRITER = join(import.meta.dirname, 'crash-writer.ts');

function baseOf(path: string): bigint {
  return BigInt(basename(path).slice(0, 20));
}

/** Opens the log in `dir`, closing it after the test; warnings are collected. */
function opener(t: TestContext, dir: string) {
  const warnings: RunlogWarning[] = [];
  const open = async (options: Partial<FileLogOptions> = {}): Promise<FileLog> => {
    const log = await openFileLog({ dir, segmentBytes: SMALL_SEGMENTS, onWarning: (w) => warnings.push(w), ...options });
    onCleanup(t, () => log.close());
    return log;
  };
  return { open, warnings };
}

/** The open fails with `code`, its message naming `path`, and writes nothing. */
async function refusesToOpen(t: TestContext, dir: string, code: ErrorCode, path: string, pattern?: RegExp): Promise<void> {
  const before = await filesUnder(dir);
  await assert.rejects(opener(t, dir).open(), (error) => {
    assert.ok(isRunlogError(error, code), `expected ${code}, got ${String(error)}`);
    assert.ok(error.message.includes(path), `the message names ${path}: ${error.message}`);
    if (pattern) assert.match(error.message, pattern);
    return true;
  });
  assert.deepEqual(await filesUnder(dir), before, 'a failed open writes nothing');
}

describe('file log: missing or foreign pieces are Corrupt', () => {
  it('a segment deleted from the middle', async (t) => {
    const dir = await scratchDir(t, 'runlog-integrity-');
    await writeLog(dir);
    const segments = await segmentPaths(join(dir, 'partition-0'));
    assert.ok(segments.length >= 4, `${segments.length} segments`);
    await rm(segments[1]!);
    await refusesToOpen(t, dir, 'Corrupt', segments[2]!, /missing/);
  });

  it('the last segment deleted', async (t) => {
    const dir = await scratchDir(t, 'runlog-integrity-');
    await writeLog(dir);
    const segments = await segmentPaths(join(dir, 'partition-0'));
    await rm(segments.at(-1)!);
    await refusesToOpen(t, dir, 'Corrupt', segments.at(-1)!, /sealed.*missing/);
  });

  it('the first segment deleted', async (t) => {
    const dir = await scratchDir(t, 'runlog-integrity-');
    await writeLog(dir);
    const segments = await segmentPaths(join(dir, 'partition-0'));
    await rm(segments[0]!);
    await refusesToOpen(t, dir, 'Corrupt', segments[1]!, /not 0/);
  });

  it('every segment of a partition deleted', async (t) => {
    const dir = await scratchDir(t, 'runlog-integrity-');
    await writeLog(dir, 2);
    for (const path of await segmentPaths(join(dir, 'partition-1'))) await rm(path);
    await refusesToOpen(t, dir, 'Corrupt', join(dir, 'partition-1'), /no segment/);
  });

  it('a segment renamed', async (t) => {
    const dir = await scratchDir(t, 'runlog-integrity-');
    await writeLog(dir);
    const segments = await segmentPaths(join(dir, 'partition-0'));
    const renamed = join(dir, 'partition-0', `${String(baseOf(segments[1]!) + 1n).padStart(20, '0')}.log`);
    assert.ok(baseOf(renamed) < baseOf(segments[2]!));
    await rename(segments[1]!, renamed);
    await refusesToOpen(t, dir, 'Corrupt', renamed, /renamed/);
  });

  it('a segment copied in from another partition or another log', async (t) => {
    const dir = await scratchDir(t, 'runlog-integrity-');
    await writeLog(dir, 2);
    const [zero, one] = [await segmentPaths(join(dir, 'partition-0')), await segmentPaths(join(dir, 'partition-1'))];
    await writeFile(one[0]!, await readFile(zero[0]!));
    await refusesToOpen(t, dir, 'Corrupt', one[0]!, /partition 0, not 1/);

    const other = await scratchDir(t, 'runlog-integrity-');
    await writeLog(other, 2);
    await writeFile(one[0]!, await readFile(join(other, 'partition-1', '00000000000000000000.log')));
    await refusesToOpen(t, dir, 'Corrupt', one[0]!, /another log/);
  });

  it('a partition directory deleted, or one too many', async (t) => {
    const dir = await scratchDir(t, 'runlog-integrity-');
    await writeLog(dir, 3);
    await rename(join(dir, 'partition-1'), join(dir, 'moved-away'));
    await refusesToOpen(t, dir, 'Corrupt', join(dir, 'partition-1'), /missing/);
    await rename(join(dir, 'moved-away'), join(dir, 'partition-1'));
    await mkdir(join(dir, 'partition-3'));
    await refusesToOpen(t, dir, 'Corrupt', join(dir, 'partition-3'), /not a partition/);
  });

  it('log.json edited to another partition count, or to 1.5 partitions', async (t) => {
    const dir = await scratchDir(t, 'runlog-integrity-');
    await writeLog(dir, 2);
    const meta = JSON.parse(await readFile(join(dir, 'log.json'), 'utf8'));
    await writeFile(join(dir, 'log.json'), JSON.stringify({ ...meta, partitions: 3 }));
    await refusesToOpen(t, dir, 'Corrupt', join(dir, 'partition-2'), /log\.json says the log has 3 partitions/);
    await writeFile(join(dir, 'log.json'), JSON.stringify({ ...meta, partitions: 1 }));
    await refusesToOpen(t, dir, 'Corrupt', join(dir, 'partition-1'), /log\.json says it has 1 partitions/);
    await writeFile(join(dir, 'log.json'), JSON.stringify({ ...meta, partitions: 1.5 }));
    await refusesToOpen(t, dir, 'Corrupt', join(dir, 'log.json'), /1\.5/);
  });

  it('a queue on a log whose log.json was edited does not open (its threads would hash to other partitions)', async (t) => {
    const dir = await scratchDir(t, 'runlog-integrity-');
    const queue = await openRunQueue({ log: { kind: 'file', dir }, partitions: 2 });
    await queue.submit({ tenant: 'acme', thread: 'order-1', agent: 'billing', input: 'x' });
    await queue.stop();
    const meta = JSON.parse(await readFile(join(dir, 'log.json'), 'utf8'));
    await writeFile(join(dir, 'log.json'), JSON.stringify({ ...meta, partitions: 3 }));
    await mkdir(join(dir, 'partition-2'));
    await assert.rejects(openRunQueue({ log: { kind: 'file', dir } }), (e) => isRunlogError(e, 'Corrupt'));
  });

  for (const [name, bytes] of [
    ['empty', ''],
    ['garbage', '\u0000\u0001 not json at all'],
    ['not an object', '[1, 2]'],
    ['without a log id', JSON.stringify({ format: 'runlog-file-log/2', partitions: 1 })],
  ] as const) {
    it(`a log.json that is ${name} is Corrupt`, async (t) => {
      const dir = await scratchDir(t, 'runlog-integrity-');
      await writeLog(dir);
      await writeFile(join(dir, 'log.json'), bytes);
      await refusesToOpen(t, dir, 'Corrupt', join(dir, 'log.json'));
    });
  }

  it('a log of the previous format is refused as unsupported, not opened', async (t) => {
    const dir = await scratchDir(t, 'runlog-integrity-');
    await mkdir(join(dir, 'partition-0'));
    await writeFile(join(dir, 'log.json'), JSON.stringify({ format: 'runlog-file-log/1', partitions: 1 }));
    await writeFile(join(dir, 'partition-0', '00000000000000000000.log'), '');
    await refusesToOpen(t, dir, 'InvalidArgument', join(dir, 'log.json'), /runlog-file-log\/1 is not supported/);
  });
});

describe('file log: log.json is restored from the partitions when lost', () => {
  it('a deleted log.json is restored from the segment headers, with a warning; the log is whole', async (t) => {
    const dir = await scratchDir(t, 'runlog-integrity-');
    await writeLog(dir, 2);
    const meta = await readFile(join(dir, 'log.json'), 'utf8');
    await rm(join(dir, 'log.json'));
    const { open, warnings } = opener(t, dir);
    const log = await open();
    assert.equal(log.partitions, 2);
    assert.equal((await keysOf(log, 1)).length, 24);
    assert.deepEqual(
      warnings.map((w) => w.code),
      ['RUNLOG_LOG_REPAIRED'],
    );
    assert.match(warnings[0]!.message, /log\.json was missing; restored/);
    assert.deepEqual(JSON.parse(await readFile(join(dir, 'log.json'), 'utf8')), JSON.parse(meta));
  });

  it('log.json and a partition deleted: Corrupt, not a smaller log', async (t) => {
    const dir = await scratchDir(t, 'runlog-integrity-');
    await writeLog(dir, 3);
    await rm(join(dir, 'log.json'));
    await rm(join(dir, 'partition-2'), { recursive: true });
    await refusesToOpen(t, dir, 'Corrupt', join(dir, 'partition-2'), /missing/);
  });
});

describe('file log: crashes in a roll, a compaction or the creation are finished or undone', () => {
  it('a roll interrupted after the seal: the new segment is put in place', async (t) => {
    const dir = await scratchDir(t, 'runlog-integrity-');
    await writeLog(dir);
    const segments = await segmentPaths(join(dir, 'partition-0'));
    const { logId } = JSON.parse(await readFile(join(dir, 'log.json'), 'utf8'));
    const next = join(dir, 'partition-0', '00000000000000000024.log');
    await writeFile(`${next}.new`, encodeSegmentHeader({ logId, partition: 0, partitions: 1, base: 24n }));
    await appendFile(segments.at(-1)!, encodeSeal(24n));
    const { open, warnings } = opener(t, dir);
    const log = await open();
    assert.equal((await keysOf(log)).length, 24);
    assert.deepEqual(
      warnings.map((w) => w.code),
      ['RUNLOG_LOG_REPAIRED'],
    );
    assert.deepEqual(await segmentPaths(join(dir, 'partition-0')), [...segments, next]);
    assert.deepEqual(await log.append(0, [rec('after', 'x')]), [24n]);
  });

  it('a torn seal (the roll interrupted while sealing) is a torn tail: cut, and the new segment removed', async (t) => {
    const dir = await scratchDir(t, 'runlog-integrity-');
    await writeLog(dir);
    const segments = await segmentPaths(join(dir, 'partition-0'));
    const { logId } = JSON.parse(await readFile(join(dir, 'log.json'), 'utf8'));
    const next = join(dir, 'partition-0', '00000000000000000024.log.new');
    await writeFile(next, encodeSegmentHeader({ logId, partition: 0, partitions: 1, base: 24n }));
    await appendFile(segments.at(-1)!, encodeSeal(24n).subarray(0, 15));
    const { open, warnings } = opener(t, dir);
    const log = await open();
    assert.deepEqual(warnings.map((w) => w.code).sort(), ['RUNLOG_LOG_REPAIRED', 'RUNLOG_TORN_TAIL']);
    await assert.rejects(stat(next), { code: 'ENOENT' });
    assert.deepEqual(await log.append(0, [rec('after', 'x')]), [24n]);
  });

  it('a roll interrupted before the seal: the unfinished new segment is removed', async (t) => {
    const dir = await scratchDir(t, 'runlog-integrity-');
    await writeLog(dir);
    const segments = await segmentPaths(join(dir, 'partition-0'));
    const next = join(dir, 'partition-0', '00000000000000000024.log.new');
    await writeFile(next, (await readFile(segments.at(-1)!)).subarray(0, 30)); // a torn header
    const { open, warnings } = opener(t, dir);
    const log = await open();
    assert.deepEqual(
      warnings.map((w) => w.code),
      ['RUNLOG_LOG_REPAIRED'],
    );
    await assert.rejects(stat(next), { code: 'ENOENT' });
    assert.deepEqual(await log.append(0, [rec('after', 'x')]), [24n]);
  });

  it('a compaction that drops every record keeps the range: the end offset survives, nothing looks missing', async (t) => {
    const dir = await scratchDir(t, 'runlog-integrity-');
    const { open } = opener(t, dir);
    const log = await open();
    for (let i = 0; i < 20; i++) await log.append(0, [rec('k', `v${i}`)]);
    await log.append(0, [rec('k', null)]);
    await log.compact(0);
    await log.close();
    const again = await open();
    assert.deepEqual(await keysOf(again), []);
    assert.equal(await again.endOffset(0), 21n);
    assert.equal((await segmentPaths(join(dir, 'partition-0'))).length, 2);
  });

  it('a creation interrupted by a crash is discarded and made again', async (t) => {
    const dir = await scratchDir(t, 'runlog-integrity-');
    await writeLog(dir, 3, 0);
    await rename(join(dir, 'log.json'), join(dir, 'log.json.creating'));
    await rm(join(dir, 'partition-2'), { recursive: true });
    const { open, warnings } = opener(t, dir);
    const log = await open({ partitions: 2 });
    assert.equal(log.partitions, 2);
    assert.deepEqual(
      warnings.map((w) => w.code),
      ['RUNLOG_LOG_REPAIRED'],
    );
  });

  it('log.json.creating beside a partition that holds records is Corrupt, nothing removed', async (t) => {
    const dir = await scratchDir(t, 'runlog-integrity-');
    await writeLog(dir, 2);
    await rename(join(dir, 'log.json'), join(dir, 'log.json.creating'));
    await refusesToOpen(t, dir, 'Corrupt', join(dir, 'partition-0'), /creation was interrupted/);
  });
});

describe('file log: opening errors name the path', () => {
  it('a dir that is a regular file, or lies under one, is InvalidArgument', async (t) => {
    const dir = await scratchDir(t, 'runlog-integrity-');
    const file = join(dir, 'file');
    await writeFile(file, 'x');
    for (const path of [file, join(file, 'log')]) {
      await assert.rejects(openFileLog({ dir: path }), (e) => isRunlogError(e, 'InvalidArgument') && e.message.includes(file));
      await assert.rejects(
        openFileLog({ dir: path, readOnly: true }),
        (e) => isRunlogError(e, 'InvalidArgument') && e.message.includes(file),
      );
    }
    await assert.rejects(openFileLog({ dir: `${dir}\u0000x` }), (e) => isRunlogError(e, 'InvalidArgument') && /NUL/.test(e.message));
  });

  it('a directory the file system refuses to make is LogUnavailable naming it (sysfs refuses mkdir even to root)', async () => {
    const dir = '/sys/runlog-file-log-test';
    await assert.rejects(openFileLog({ dir }), (e) => isRunlogError(e, 'LogUnavailable') && e.message.includes(dir) && !e.retriable);
  });

  it(
    'a directory the process may not write is LogUnavailable naming it',
    { skip: process.getuid?.() === 0 && 'root may write anywhere' },
    async (t) => {
      const dir = await scratchDir(t, 'runlog-integrity-');
      const locked = join(dir, 'locked');
      await mkdir(locked, { mode: 0o500 });
      await assert.rejects(openFileLog({ dir: locked }), (e) => isRunlogError(e, 'LogUnavailable') && e.message.includes(locked));
    },
  );
});

describe('file log: reporting', () => {
  it('a torn tail cut on open is a RUNLOG_TORN_TAIL warning and is counted in metrics()', async (t) => {
    const dir = await scratchDir(t, 'runlog-integrity-');
    const first = await openRunQueue({ log: { kind: 'file', dir }, onWarning: () => assert.fail('no warning on a whole log') });
    await first.submit({ tenant: 'acme', thread: 't', agent: 'a', input: 'x' });
    await first.stop();
    await appendFile((await segmentPaths(join(dir, 'partition-0'))).at(-1)!, Buffer.from('half a frame'));

    const warnings: RunlogWarning[] = [];
    const queue = await openRunQueue({ log: { kind: 'file', dir }, onWarning: (w) => warnings.push(w) });
    onCleanup(t, () => queue.stop());
    assert.deepEqual(
      warnings.map((w) => w.code),
      ['RUNLOG_TORN_TAIL'],
    );
    assert.match(warnings[0]!.message, /partition-0.*torn tail of 12 bytes/);
    assert.deepEqual((await queue.metrics()).warnings, { RUNLOG_TORN_TAIL: 1 });
    assert.equal((await queue.metrics()).enqueued, 1);
  });

  it('onWarning must be a function', async (t) => {
    const dir = await scratchDir(t, 'runlog-integrity-');
    const bad = { log: { kind: 'file', dir }, onWarning: 'stderr' } as unknown as Parameters<typeof openRunQueue>[0];
    await assert.rejects(openRunQueue(bad), (e) => isRunlogError(e, 'InvalidArgument') && /onWarning/.test(e.message));
  });
});

describe('file log: read-only', () => {
  it('creates nothing: a missing log is InvalidArgument', async (t) => {
    const dir = await scratchDir(t, 'runlog-integrity-');
    const missing = join(dir, 'typo');
    await assert.rejects(
      openFileLog({ dir: missing, readOnly: true }),
      (e) => isRunlogError(e, 'InvalidArgument') && e.message.includes(missing),
    );
    await assert.rejects(stat(missing), { code: 'ENOENT' });
    await assert.rejects(
      openFileLog({ dir, readOnly: true }),
      (e) => isRunlogError(e, 'InvalidArgument') && /no runlog file log/.test(e.message),
    );
    assert.deepEqual([...(await filesUnder(dir)).keys()], []);
  });

  it('reads a log a writer holds, takes no lock, and refuses appends, compaction and tail', async (t) => {
    const dir = await scratchDir(t, 'runlog-integrity-');
    const { open } = opener(t, dir);
    const writer = await open();
    for (let i = 0; i < 10; i++) await writer.append(0, [rec(`k${i}`, 'v')]);
    const reader = await open({ readOnly: true });
    await writer.append(0, [rec('later', 'v')]);
    await writer.compact(0);
    assert.deepEqual(
      await keysOf(reader),
      Array.from({ length: 10 }, (_, i) => `k${i}`),
    );
    assert.equal(await reader.endOffset(0), 10n);
    await assert.rejects(reader.append(0, [rec('x', 'y')]), (e) => isRunlogError(e, 'InvalidArgument') && /read-only/.test(e.message));
    await assert.rejects(reader.compact(0), (e) => isRunlogError(e, 'InvalidArgument'));
    assert.throws(
      () => reader.tail(0, 0n, { signal: new AbortController().signal }),
      (e) => isRunlogError(e, 'InvalidArgument'),
    );
    await reader.close();
    assert.deepEqual(await writer.append(0, [rec('still', 'writing')]), [11n]);
  });

  it('reads a log while a writer in another process appends and rolls segments all the time', async (t) => {
    const dir = await scratchDir(t, 'runlog-integrity-');
    const writer = spawn(process.execPath, ['--import', 'tsx', CRASH_WRITER, dir, '2048'], { stdio: ['ignore', 'pipe', 'inherit'] });
    const exited = once(writer, 'exit');
    onCleanup(t, () => writer.kill('SIGKILL'));
    const acked = new Map<bigint, string>();
    const lines = createInterface({ input: writer.stdout });
    lines.on('line', (line) => {
      const [offset, key] = line.split(' ');
      if (key !== undefined) acked.set(BigInt(offset!), key);
    });
    while (acked.size < 500) await new Promise((resolve) => setTimeout(resolve, 20));
    // At least 8 reads, and on until the writer has rolled more than 20 segments while they ran:
    // the condition is the writer's progress, not how fast it runs on this machine.
    for (let round = 0; round < 8 || (await segmentPaths(join(dir, 'partition-0'))).length <= 20; round++) {
      const before = new Map(acked);
      const log = await openFileLog({ dir, readOnly: true, onWarning: () => {} });
      const records = await collect(log.read(0, 0n));
      await log.close();
      records.forEach((r, i) => assert.equal(r.offset, BigInt(i), 'offsets are dense from 0'));
      for (const r of records) assert.equal(Buffer.from(r.value!).toString(), `value:${r.key}`);
      const read = new Map(records.map((r) => [r.offset, r.key]));
      for (const [offset, key] of before) assert.equal(read.get(offset), key, `acknowledged before the open: ${offset} ${key}`);
    }
    assert.ok((await segmentPaths(join(dir, 'partition-0'))).length > 20, 'the writer rolled its segments');
    writer.kill('SIGKILL');
    await exited;
  });

  it('reports a torn tail and leaves it: the bytes stay, the records before it are read', async (t) => {
    const dir = await scratchDir(t, 'runlog-integrity-');
    await writeLog(dir);
    await appendFile((await segmentPaths(join(dir, 'partition-0'))).at(-1)!, Buffer.from('torn'));
    const before = await filesUnder(dir);
    const { open, warnings } = opener(t, dir);
    const log = await open({ readOnly: true });
    assert.equal((await collect(log.read(0, 0n))).length, 24);
    assert.deepEqual(
      warnings.map((w) => w.code),
      ['RUNLOG_TORN_TAIL'],
    );
    assert.match(warnings[0]!.message, /not done: opened read-only/);
    await log.close();
    assert.deepEqual(await filesUnder(dir), before);
  });
});
