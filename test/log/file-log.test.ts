import assert from 'node:assert/strict';
import { appendFile, copyFile, readFile, readdir, stat, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import { isRunlogError } from '../../src/errors.ts';
import type { LogRecord } from '../../src/log/event-log.ts';
import { DEFAULT_FILE_PARTITIONS, openFileLog, type FileLog, type FileLogOptions } from '../../src/log/file/file-log.ts';
import { encodeSeal } from '../../src/log/file/frame.ts';
import { eventLogContract } from '../contract/event-log.contract.ts';
import { collect, rec, text } from '../contract/log-records.ts';
import { filesUnder } from './file-damage.ts';
import { onCleanup, scratchDir } from '../support/cleanup.ts';

/** A fresh directory; every log opened through it is closed, then the directory removed. */
async function scratch(t: TestContext) {
  const dir = await scratchDir(t, 'runlog-file-log-');
  const logs: FileLog[] = [];
  onCleanup(t, async () => {
    for (const log of logs) await log.close();
  });
  const warnings: string[] = [];
  const open = async (options: Partial<Omit<FileLogOptions, 'dir'>> = {}): Promise<FileLog> => {
    const log = await openFileLog({ dir, partitions: 1, onWarning: (w) => warnings.push(`${w.code}: ${w.message}`), ...options });
    logs.push(log);
    return log;
  };
  return { dir, open, warnings, part0: join(dir, 'partition-0') };
}

eventLogContract('file', async (partitions, t) => (await scratch(t)).open({ partitions }));
eventLogContract('file (tiny segments, no fsync)', async (partitions, t) =>
  (await scratch(t)).open({ partitions, segmentBytes: 64, fsync: false }),
);

async function segmentFiles(partDir: string): Promise<string[]> {
  return (await readdir(partDir)).filter((name) => name.endsWith('.log')).sort();
}

async function lastSegment(partDir: string): Promise<string> {
  return join(partDir, (await segmentFiles(partDir)).at(-1)!);
}

const keysOf = async (log: FileLog, partition = 0) => (await collect(log.read(partition, 0n))).map((r) => r.key);

/** Three appends (three frames) of keys a..f, closed. */
async function threeFrames(open: () => Promise<FileLog>): Promise<void> {
  const log = await open();
  await log.append(0, [rec('a', '1'), rec('b', '2')]);
  await log.append(0, [rec('c', '3'), rec('d', '4')]);
  await log.append(0, [rec('e', '5'), rec('f', '6')]);
  await log.close();
}

/**
 * The state a writer killed after its third append leaves when its last "reached" record
 * (reached.ts) was refreshed after the second: only the third frame may be torn.
 */
async function threeFramesLastUnrecorded(s: { dir: string; open: () => Promise<FileLog> }): Promise<void> {
  const log = await s.open();
  await log.append(0, [rec('a', '1'), rec('b', '2')]);
  await log.append(0, [rec('c', '3'), rec('d', '4')]);
  await log.close();
  const record = await readFile(join(s.dir, 'reached-0.json'));
  const again = await s.open();
  await again.append(0, [rec('e', '5'), rec('f', '6')]);
  await again.close();
  await writeFile(join(s.dir, 'reached-0.json'), record);
}

describe('file log', () => {
  it('keeps everything across close and reopen', async (t) => {
    const s = await scratch(t);
    const log = await s.open({ partitions: 2 });
    await log.append(0, [rec('a', '1'), rec('b', '2')]);
    await log.append(1, [rec('x', '9')]);
    await log.append(0, [rec('a', null)]);
    await log.close();
    const again = await s.open({ partitions: 2 });
    assert.deepEqual(await keysOf(again, 0), ['a', 'b', 'a']);
    assert.deepEqual((await collect(again.read(1, 0n))).map(text), ['9']);
    assert.equal(await again.endOffset(0), 3n);
    assert.deepEqual(await again.append(0, [rec('c', '3')]), [3n]);
    assert.deepEqual(s.warnings, []);
  });

  it('refuses to reopen with another partition count', async (t) => {
    const s = await scratch(t);
    await (await s.open({ partitions: 2 })).close();
    await assert.rejects(s.open({ partitions: 3 }), (e) => isRunlogError(e, 'InvalidArgument'));
  });

  it('without a partition count: a new log gets DEFAULT_FILE_PARTITIONS, an existing one keeps its count', async (t) => {
    assert.equal((await (await scratch(t)).open({ partitions: undefined })).partitions, DEFAULT_FILE_PARTITIONS);
    const s = await scratch(t);
    await (await s.open({ partitions: 3 })).close();
    assert.equal((await s.open({ partitions: undefined })).partitions, 3);
  });

  describe('torn tail', () => {
    const damages: Array<[string, (path: string) => Promise<void>]> = [
      ['garbage appended', (path) => appendFile(path, Buffer.from('this is not a frame, just garbage bytes'))],
      ['last frame cut short', async (path) => truncate(path, (await stat(path)).size - 5)],
      ['last frame header cut short', async (path) => truncate(path, (await stat(path)).size - 40)],
      ['zeros appended', (path) => appendFile(path, Buffer.alloc(4096))],
    ];
    for (const [name, damage] of damages) {
      it(`is cut on open: ${name}`, async (t) => {
        const s = await scratch(t);
        await threeFramesLastUnrecorded(s);
        await damage(await lastSegment(s.part0));
        const log = await s.open();
        assert.equal(s.warnings.length, 1, s.warnings.join('\n'));
        assert.match(s.warnings[0]!, /torn tail/);
        const keys = await keysOf(log);
        const expected = name.startsWith('last frame') ? ['a', 'b', 'c', 'd'] : ['a', 'b', 'c', 'd', 'e', 'f'];
        assert.deepEqual(keys, expected);
        const [next] = await log.append(0, [rec('g', '7')]);
        assert.equal(next, BigInt(expected.length));
        await log.close();
        const again = await s.open();
        assert.deepEqual(await keysOf(again), [...expected, 'g']);
        assert.equal(s.warnings.length, 1);
      });
    }
  });

  describe('corruption', () => {
    /** threeFrames, then a byte of the middle frame flipped; answers the segment's path. */
    async function damageMiddleFrame(s: { part0: string; open: () => Promise<FileLog> }): Promise<string> {
      await threeFrames(s.open);
      const path = await lastSegment(s.part0);
      const bytes = await readFile(path);
      const middle = Math.floor(bytes.length / 2); // inside the middle frame
      bytes[middle] = bytes[middle]! ^ 0xff;
      await writeFile(path, bytes);
      return path;
    }

    it('after a crash, a damaged frame before the last one fails the open with Corrupt and writes nothing', async (t) => {
      const s = await scratch(t);
      const path = await damageMiddleFrame(s);
      // What a crash leaves: a record of the end reached, but none of a clean close.
      const reached = JSON.parse(await readFile(join(s.dir, 'reached-0.json'), 'utf8')) as Record<string, unknown>;
      assert.ok(reached['clean'] !== undefined, 'the clean close was recorded');
      delete reached['clean'];
      await writeFile(join(s.dir, 'reached-0.json'), JSON.stringify(reached));
      const before = await filesUnder(s.dir);
      await assert.rejects(s.open(), (e) => isRunlogError(e, 'Corrupt') && e.message.includes(path) && /byte \d+/.test(e.message));
      assert.deepEqual(await filesUnder(s.dir), before);
    });

    it('after a clean close, a damaged frame before the last one fails the read that meets it with Corrupt, and writes nothing', async (t) => {
      const s = await scratch(t);
      const path = await damageMiddleFrame(s);
      const before = await filesUnder(s.dir);
      const log = await s.open(); // the active segment is trusted as the clean close left it; its frames are checked when read
      await assert.rejects(
        collect(log.read(0, 0n)),
        (e) => isRunlogError(e, 'Corrupt') && e.message.includes(path) && /byte \d+/.test(e.message),
      );
      // The index of a segment opened unread is learned by reading through it: reads of the damaged frame meet it too.
      await assert.rejects(collect(log.read(0, 3n)), (e) => isRunlogError(e, 'Corrupt') && e.message.includes(path));
      // The last frame, read and checked at the open, is read without the frames before it (a snapshot's anchor: record-anchor.ts).
      assert.deepEqual(
        (await collect(log.read(0, 4n))).map((r) => r.key),
        ['e', 'f'],
      );
      await log.close();
      assert.deepEqual(await filesUnder(s.dir), before);
    });

    it('damage in a segment that is not the last is Corrupt, even at its end', async (t) => {
      const s = await scratch(t);
      const log = await s.open({ segmentBytes: 64 });
      for (let i = 0; i < 5; i++) await log.append(0, [rec(`k${i}`, 'a value long enough to roll')]);
      await log.close();
      const first = join(s.part0, (await segmentFiles(s.part0))[0]!);
      await truncate(first, (await stat(first)).size - 3);
      await assert.rejects(s.open({ segmentBytes: 64 }), (e) => isRunlogError(e, 'Corrupt') && e.message.includes(first));
    });
  });

  describe('segments', () => {
    it('rolls at segmentBytes and reads across segments from anywhere', async (t) => {
      const s = await scratch(t);
      const log = await s.open({ segmentBytes: 256 });
      const all: bigint[] = [];
      for (let i = 0; i < 60; i++) all.push(...(await log.append(0, [rec(`k${i}`, `value ${i}`), rec(`j${i}`, null)])));
      assert.ok((await segmentFiles(s.part0)).length > 5);
      const records = await collect(log.read(0, 0n));
      assert.deepEqual(
        records.map((r) => r.offset),
        all,
      );
      const middle = await collect(log.read(0, 77n, { maxRecords: 10 }));
      assert.deepEqual(
        middle.map((r) => r.offset),
        all.slice(77, 87),
      );
      await log.close();
      const again = await s.open({ segmentBytes: 256 });
      assert.deepEqual(
        (await collect(again.read(0, 33n))).map((r) => r.offset),
        all.slice(33),
      );
    });

    it('compaction rewrites closed segments, survives reopen, and keeps the end offset', async (t) => {
      const s = await scratch(t);
      const log = await s.open({ segmentBytes: 128 });
      for (let i = 0; i < 40; i++) await log.append(0, [rec(`k${i % 5}`, `v${i}`)]);
      await log.append(0, [rec('k0', null)]);
      await log.compact(0);
      const expected = [
        ['k1', 'v36'],
        ['k2', 'v37'],
        ['k3', 'v38'],
        ['k4', 'v39'],
      ];
      const read = async (l: FileLog) => (await collect(l.read(0, 0n))).map((r) => [r.key, text(r)]);
      assert.deepEqual(await read(log), expected);
      assert.equal((await segmentFiles(s.part0)).length, 2); // the compacted one and the new active one
      await log.close();
      const again = await s.open({ segmentBytes: 128 });
      assert.deepEqual(await read(again), expected);
      assert.equal(await again.endOffset(0), 41n);
      for (const key of ['k1', 'k2', 'k3', 'k4']) await again.append(0, [rec(key, null)]);
      await again.compact(0);
      await again.close();
      const empty = await s.open({ segmentBytes: 128 });
      assert.deepEqual(await read(empty), []);
      assert.equal(await empty.endOffset(0), 45n);
      assert.deepEqual(await empty.append(0, [rec('z', '1')]), [45n]);
    });

    it('recovers from a compaction interrupted after its rename', async (t) => {
      const s = await scratch(t);
      const log = await s.open({ segmentBytes: 64 });
      for (let i = 0; i < 12; i++) await log.append(0, [rec(`k${i % 3}`, `v${i}`), rec(`only${i}`, 'x')]);
      const beforeFiles = await segmentFiles(s.part0);
      const backup = await scratchDir(t, 'runlog-backup-');
      for (const name of beforeFiles) await copyFile(join(s.part0, name), join(backup, name));
      const view = new Map((await collect(log.read(0, 0n))).map((r) => [r.key, text(r)]));
      await log.compact(0);
      await log.close();
      // Put back the inputs the compaction removed, as if it crashed right after the rename.
      // The last of them was the active segment when copied: the compaction's roll sealed it.
      const afterFiles = await segmentFiles(s.part0);
      for (const name of beforeFiles) if (!afterFiles.includes(name)) await copyFile(join(backup, name), join(s.part0, name));
      await appendFile(join(s.part0, beforeFiles.at(-1)!), encodeSeal(BigInt(afterFiles.at(-1)!.slice(0, 20))));
      await writeFile(join(s.part0, `${beforeFiles[0]}.compacting`), 'half written');
      const again = await s.open({ segmentBytes: 64 });
      const records = await collect(again.read(0, 0n));
      const offsets = records.map((r) => r.offset);
      assert.deepEqual(
        offsets,
        [...offsets].sort((a, b) => (a < b ? -1 : 1)),
      );
      assert.equal(new Set(offsets).size, offsets.length);
      assert.deepEqual(new Map(records.map((r) => [r.key, text(r)])), view);
      assert.ok(s.warnings.some((w) => /interrupted compaction/.test(w)));
      assert.ok(!(await readdir(s.part0)).some((name) => name.endsWith('.compacting')));
    });
  });

  describe('compaction while others work', () => {
    it('readers in flight and appends going on see a consistent log', async (t) => {
      const s = await scratch(t);
      const log = await s.open({ segmentBytes: 256 });
      for (let i = 0; i < 200; i++) await log.append(0, [rec(`k${i % 7}`, `v${i}`), rec(`u${i}`, i % 2 ? null : 'x')]);
      const reader = log.read(0, 0n)[Symbol.asyncIterator]();
      const firstHalf: LogRecord[] = [];
      for (let i = 0; i < 150; i++) firstHalf.push((await reader.next()).value as LogRecord);
      const appending = Promise.all(Array.from({ length: 8 }, (_, c) => log.append(0, [rec(`late${c}`, 'l')])));
      await log.compact(0);
      await appending;
      const rest: LogRecord[] = [];
      for (let step = await reader.next(); !step.done; step = await reader.next()) rest.push(step.value);
      const offsets = [...firstHalf, ...rest].map((r) => r.offset);
      assert.deepEqual(
        offsets,
        [...new Set(offsets)].sort((a, b) => (a < b ? -1 : 1)),
      );
      assert.ok(offsets.at(-1)! < 400n, 'the read ends at the end offset of its call');
      const latest = new Map((await collect(log.read(0, 0n))).map((r) => [r.key, text(r)]));
      for (let k = 0; k < 7; k++) assert.equal(latest.get(`k${k}`), `v${199 - ((199 - k) % 7)}`);
      for (let c = 0; c < 8; c++) assert.equal(latest.get(`late${c}`), 'l');
      assert.ok(![...latest.values()].includes(null));
    });
  });

  describe('group commit', () => {
    it('coalesces concurrent appends into fewer writes and fsyncs', async (t) => {
      const s = await scratch(t);
      const log = await s.open();
      const callers = 64;
      const rounds = 20;
      await Promise.all(
        Array.from({ length: callers }, async (_, c) => {
          for (let r = 0; r < rounds; r++) await log.append(0, [rec(`c${c}`, `r${r}`)]);
        }),
      );
      const stats = log.stats();
      assert.equal(stats.appends, callers * rounds);
      assert.equal(stats.records, callers * rounds);
      assert.equal(stats.fsyncs, stats.writes);
      assert.ok(stats.fsyncs * 4 <= stats.appends, `${stats.fsyncs} fsyncs for ${stats.appends} appends`);
      assert.equal((await collect(log.read(0, 0n))).length, callers * rounds);
    });

    it('counts no fsync when fsync is off', async (t) => {
      const s = await scratch(t);
      const log = await s.open({ fsync: false });
      await log.append(0, [rec('a', '1')]);
      assert.deepEqual({ ...log.stats(), bytes: 0 }, { appends: 1, records: 1, writes: 1, fsyncs: 0, bytes: 0 });
    });
  });
});
