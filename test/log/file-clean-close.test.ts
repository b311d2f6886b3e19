/**
 * The clean close (src/log/file/recovery.ts: CLEAN CLOSE): a clean close records where it left
 * each active segment, and the next open trusts a last segment found just so without reading its
 * frames. Shown on real files: that the reopen does not read them (a probe on a copy), that every
 * record reads back as before from anywhere (reads, tails, racing appends), after appends, rolls,
 * a compaction and a full disk; that damage the open did not read is met by the read, compaction,
 * replay or `runlog verify` that reads it, never skipped; that a record which does not match the
 * files is never trusted (but see the FINDING: a lastFrame edited into a crafted record value);
 * and that only a clean close writes one.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { cp, readFile, rm, stat, watch, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import { isRunlogError } from '../../src/errors.ts';
import { openFileLog, type FileLog, type FileLogOptions } from '../../src/log/file/file-log.ts';
import { encodeFrame, frameBytes, recordBytes } from '../../src/log/file/frame.ts';
import { SEGMENT_HEADER_BYTES } from '../../src/log/file/segment-header.ts';
import { replayPartition } from '../../src/projector/replay.ts';
import { openRunQueue } from '../../src/queue/open-run-queue.ts';
import { runCli } from '../cli/run-cli.ts';
import { submitOf } from '../contract/fixtures.ts';
import { rec } from '../contract/log-records.ts';
import { onCleanup, scratchDir } from '../support/cleanup.ts';
import { fill, smallTmpfs } from '../support/tmpfs.ts';
import {
  appendMany,
  asWritten,
  cleanOf,
  opensUnread,
  readBack,
  readRecord,
  recordPath,
  seeded,
  slice,
  writeRecord,
  type Written,
} from './clean-close.ts';
import { corruptAt, damageFrameHolding, filesUnder, flipByte, segmentPaths } from './file-damage.ts';
import { awaitZombie, lockHolder } from './lock-holder.ts';

async function scratch(t: TestContext) {
  const dir = await scratchDir(t, 'runlog-clean-close-');
  const warnings: string[] = [];
  const open = async (options: Partial<Omit<FileLogOptions, 'dir'>> = {}): Promise<FileLog> => {
    const log = await openFileLog({ dir, partitions: 1, onWarning: (w) => warnings.push(`${w.code}: ${w.message}`), ...options });
    onCleanup(t, () => log.close());
    return log;
  };
  return { dir, open, warnings, part0: join(dir, 'partition-0') };
}

/** `reads` reads, each compared with `all`: from the last record, from the end, then from offsets drawn from `random`. */
async function readsFromAnywhere(log: FileLog, all: readonly Written[], random: () => number, reads = 12): Promise<void> {
  const end = all.at(-1)!.offset + 1n;
  for (let i = 0; i < reads; i++) {
    const from = i === 0 ? end - 1n : i === 1 ? end : BigInt(Math.floor(random() * Number(end)));
    const maxRecords = 1 + Math.floor(random() * 40);
    assert.deepEqual(await readBack(log, from, maxRecords), slice(all, from, maxRecords), `a read from ${from} of ${maxRecords}`);
  }
}

/** The last segment's bytes flipped at its middle (inside a frame before the last); answers its path. */
async function damageMiddle(part0: string): Promise<string> {
  const path = (await segmentPaths(part0)).at(-1)!;
  await flipByte(path, Math.floor((await stat(path)).size / 2));
  return path;
}

const corruptIn = (path: string) => (e: unknown) => isRunlogError(e, 'Corrupt') && e.message.includes(path) && /byte \d+/.test(e.message);

describe('file log: after a clean close', () => {
  it('the active segment is opened unread (writable and read-only), and its record names it exactly', async (t) => {
    const s = await scratch(t);
    const log = await s.open();
    await appendMany(log, 300, 'k');
    await log.close();
    const segment = (await segmentPaths(s.part0)).at(-1)!;
    const clean = cleanOf(await readRecord(s.dir))!;
    assert.deepEqual(
      { segment: clean.segment, bytes: clean.bytes, end: (await readRecord(s.dir))['end'] },
      { segment: '0', bytes: (await stat(segment)).size, end: '300' },
    );
    assert.ok(clean.lastFrame > 0 && clean.lastFrame < clean.bytes);
    assert.equal(await opensUnread(t, s.dir, false), true, 'a writable open reads no frame but the last');
    assert.equal(await opensUnread(t, s.dir, true), true, 'a read-only open reads no frame but the last');
  });

  it('every record reads back the same, from 0 and from anywhere, each open learning its index afresh', async (t) => {
    const s = await scratch(t);
    const log = await s.open();
    const all = await appendMany(log, 1200, 'k'); // about 300 KB: several entries of the sparse index (64 KiB apart)
    await log.close();
    const random = seeded(7);
    for (let round = 0; round < 4; round++) {
      const reader = await s.open({ readOnly: true });
      await readsFromAnywhere(reader, all, random, 6); // the first read lands near the end, nothing learned yet
      await reader.close();
    }
    const again = await s.open();
    assert.equal(await again.endOffset(0), 1200n);
    await readsFromAnywhere(again, all, random);
    assert.deepEqual(await readBack(again), all);
    assert.deepEqual(s.warnings, []);
  });

  it('appends on the reopened log join the unread segment: reads find them before and after the learning reaches them', async (t) => {
    const s = await scratch(t);
    const first = await s.open();
    const before = await appendMany(first, 600, 'a');
    await first.close();
    const log = await s.open();
    const after = await appendMany(log, 300, 'b');
    assert.equal(after[0]!.offset, 600n);
    const all = [...before, ...after];
    // A read of the new records first: the learning must go through every unread frame to reach them.
    assert.deepEqual(await readBack(log, 750n, 20), slice(all, 750n, 20));
    await readsFromAnywhere(log, all, seeded(11));
    const more = await appendMany(log, 50, 'c'); // appended once the learning reached the end: indexed as written
    all.push(...more);
    await readsFromAnywhere(log, all, seeded(12));
    assert.deepEqual(await readBack(log), all);
    await log.close();

    // Closed clean again: the grown segment is recorded, and trusted.
    const clean = cleanOf(await readRecord(s.dir))!;
    assert.equal(clean.bytes, (await stat((await segmentPaths(s.part0)).at(-1)!)).size);
    assert.equal(await opensUnread(t, s.dir, false), true);
    const again = await s.open();
    assert.equal(await again.endOffset(0), 950n);
    await readsFromAnywhere(again, all, seeded(13));
    assert.deepEqual(await readBack(again), all);
  });

  it('a tail from the middle of the unread segment, appends arriving meanwhile, yields every record in order', async (t) => {
    const s = await scratch(t);
    const first = await s.open();
    const all = await appendMany(first, 1000, 'a');
    await first.close();
    const log = await s.open();
    const stop = new AbortController();
    const tailed: Written[] = [];
    const tailing = (async () => {
      for await (const record of log.tail(0, 700n, { signal: stop.signal })) {
        tailed.push(...asWritten([record]));
        if (record.offset === 1049n) stop.abort();
      }
    })();
    all.push(...(await appendMany(log, 50, 'b')));
    await tailing;
    assert.deepEqual(tailed, slice(all, 700n, 350));
  });

  it('a frame larger than a read chunk (4 MiB) in the unread segment: the learning reads across it, reads from past it find every record', async (t) => {
    const s = await scratch(t);
    const first = await s.open();
    const all = await appendMany(first, 100, 'a');
    const big = 'B'.repeat(5 << 20);
    const [at] = await first.append(0, [rec('big', big)]);
    all.push({ offset: at!, key: 'big', value: big }, ...(await appendMany(first, 100, 'b')));
    await first.close();
    const log = await s.open();
    assert.deepEqual(await readBack(log, at! + 50n, 10), slice(all, at! + 50n, 10));
    assert.deepEqual(await readBack(log, at!, 2), slice(all, at!, 2));
    await readsFromAnywhere(log, all, seeded(51));
    assert.deepEqual(await readBack(log), all);
  });

  it('reads from anywhere racing appends on a segment opened unread: each read is dense and whole, and all reads back after', async (t) => {
    const s = await scratch(t);
    const first = await s.open();
    const before = await appendMany(first, 1500, 'a');
    await first.close();
    const log = await s.open();
    const valueOf = (key: string): string => `value of ${key} `.padEnd(100 + (key.length % 5) * 90, '~');
    const appenders = Array.from({ length: 6 }, async (_, c) => {
      const acked: Written[] = [];
      for (let i = 0; i < 40; i++) {
        const keys = [`c${c}/${i}/0`, `c${c}/${i}/1`];
        const offsets = await log.append(
          0,
          keys.map((key) => rec(key, valueOf(key))),
        );
        keys.forEach((key, j) => acked.push({ offset: offsets[j]!, key, value: valueOf(key) }));
      }
      return acked;
    });
    const random = seeded(41);
    const readers = Array.from({ length: 10 }, async () => {
      for (let read = 0; read < 4; read++) {
        const end = await log.endOffset(0);
        const from = BigInt(Math.floor(random() * Number(end)));
        const records = await readBack(log, from, 1 + Math.floor(random() * 300));
        records.forEach((r, i) => {
          assert.equal(r.offset, from + BigInt(i), `a read from ${from} is dense`);
          if (r.offset < 1500n) assert.deepEqual(r, before[Number(r.offset)]);
          else assert.equal(r.value, valueOf(r.key));
        });
      }
    });
    const appended = (await Promise.all([...appenders, ...readers.map(async (read) => (await read, []))])).flat();
    const all = [...before, ...appended.sort((a, b) => (a.offset < b.offset ? -1 : 1))];
    assert.deepEqual(await readBack(log), all);
    await readsFromAnywhere(log, all, seeded(42));
  });

  it('appends that roll the unread segment: it is sealed where it ended, and everything reads back across the segments', async (t) => {
    const s = await scratch(t);
    const options = { segmentBytes: 16 << 10 };
    const first = await s.open(options);
    const all = await appendMany(first, 300, 'a'); // a few segments, the last one part full
    await first.close();
    const segments = (await segmentPaths(s.part0)).length;
    assert.ok(segments > 1);
    assert.equal(await opensUnread(t, s.dir, false), true);
    const log = await s.open(options);
    all.push(...(await appendMany(log, 400, 'b')));
    assert.ok((await segmentPaths(s.part0)).length > segments + 2, 'the unread segment rolled, then others');
    await readsFromAnywhere(log, all, seeded(21));
    assert.deepEqual(await readBack(log), all);
    await log.close();
    const clean = cleanOf(await readRecord(s.dir))!;
    assert.equal(
      BigInt(clean.segment),
      BigInt((await segmentPaths(s.part0)).at(-1)!.slice(-24, -4)),
      'the record names the new last segment',
    );
    const again = await s.open(options);
    assert.deepEqual(await readBack(again), all);
    assert.deepEqual(s.warnings, []);
  });

  it('a compaction reads the unread segment (rolled into its input) and keeps the latest of each key; all reads back after another clean close', async (t) => {
    const s = await scratch(t);
    const first = await s.open();
    const written = await appendMany(first, 500, 'k', 37); // 37 keys, overwritten again and again, some deleted
    await first.close();
    const log = await s.open();
    await log.compact(0);
    const latest = new Map<string, Written>();
    for (const r of written) latest.set(r.key, r);
    const kept = [...latest.values()].filter((r) => r.value !== null).sort((a, b) => (a.offset < b.offset ? -1 : 1));
    assert.ok(kept.length > 0 && kept.length < 37);
    const after = await appendMany(log, 40, 'n');
    const all = [...kept, ...after];
    assert.deepEqual(await readBack(log), all);
    await readsFromAnywhere(log, all, seeded(31));
    assert.equal(await log.endOffset(0), 540n, 'offsets never change');
    await log.close();
    assert.equal(await opensUnread(t, s.dir, false), true);
    const again = await s.open();
    assert.deepEqual(await readBack(again), all);
    await readsFromAnywhere(again, all, seeded(32));
  });

  it('a compaction just before the close leaves an empty active segment: recorded, scanned (nothing to spare), the end and next offset right', async (t) => {
    const s = await scratch(t);
    const log = await s.open();
    const written = await appendMany(log, 60, 'k', 60);
    await log.compact(0);
    await log.close();
    const clean = cleanOf(await readRecord(s.dir))!;
    assert.deepEqual(clean, { segment: '60', bytes: SEGMENT_HEADER_BYTES, lastFrame: SEGMENT_HEADER_BYTES });
    const again = await s.open();
    assert.equal(await again.endOffset(0), 60n);
    assert.deepEqual(
      await readBack(again),
      written.filter((r) => r.value !== null),
    );
    assert.deepEqual(await again.append(0, [rec('next', 'n')]), [60n]);
  });

  it('over several partitions, each is trusted or scanned on its own: a crash image after appends to one reads every record of all', async (t) => {
    const s = await scratch(t);
    const options = { partitions: 3 };
    const first = await s.open(options);
    const all: Written[][] = [];
    for (let p = 0; p < 3; p++) all.push(await appendMany(first, 100 + p * 50, `p${p}`, undefined, p));
    await first.close();
    const log = await s.open(options);
    all[1]!.push(...(await appendMany(log, 30, 'more', undefined, 1)));
    const image = await scratchDir(t, 'runlog-clean-image-');
    await cp(s.dir, image, { recursive: true, filter: (path) => !path.endsWith('/LOCK') }); // what a SIGKILL now leaves on disk
    assert.ok(cleanOf(await readRecord(image, 0)) && cleanOf(await readRecord(image, 2)));
    assert.equal(await opensUnread(t, image, true), true, 'partition 0 is trusted');
    const opened = await openFileLog({ dir: image, onWarning: () => {} });
    onCleanup(t, () => opened.close());
    for (let p = 0; p < 3; p++) {
      assert.equal(await opened.endOffset(p), BigInt(all[p]!.length));
      assert.deepEqual(await readBack(opened, 0n, undefined, p), all[p]);
    }
  });

  describe('damage the open did not read', () => {
    it('appends go to a new segment (the writer seals the unread one first): they read back, and a read through the damage meets it (Corrupt)', async (t) => {
      const s = await scratch(t);
      const first = await s.open();
      await appendMany(first, 200, 'a');
      await first.close();
      const path = await damageMiddle(s.part0);
      const log = await s.open();
      const after = await appendMany(log, 20, 'b'); // the writer needs none of the frames before
      assert.equal((await segmentPaths(s.part0)).length, 2, 'the damaged segment was sealed before the first append');
      assert.deepEqual(await readBack(log, after[5]!.offset), after.slice(5));
      await assert.rejects(readBack(log), corruptIn(path));
      assert.equal(await log.endOffset(0), 220n);
    });

    it("a queue stopped cleanly: it reopens (from its stop's snapshot), and the read-back of closed entries, a replay from zero and runlog verify each report it", async (t) => {
      const s = await scratch(t);
      const queue = await openRunQueue({ log: { kind: 'file', dir: s.dir }, partitions: 1, closedCacheBytes: 0, onWarning: () => {} });
      const tickets: string[] = [];
      for (let i = 0; i < 30; i++) {
        tickets.push((await queue.submit(submitOf('acme', `t${i}`, { input: `input ${i}` }))).entryId);
        const taken = (await queue.take({ agents: ['build'], holder: 'w', ttlMs: 60_000 }))!;
        await queue.close(taken.lease, { status: 'succeeded', result: `result ${i}` });
      }
      await queue.stop();
      const active = (await segmentPaths(s.part0)).at(-1)!;
      const frame = await damageFrameHolding(active, 'input 0'); // the first entry's Submitted
      assert.equal(await opensUnread(t, s.dir, false), true);

      const reopened = await openRunQueue({ log: { kind: 'file', dir: s.dir }, closedCacheBytes: 0, onWarning: () => {} });
      onCleanup(t, () => reopened.stop());
      await assert.rejects(reopened.entry('acme', tickets[0]!), corruptAt(active, frame));
      // Reading an entry further on learns the segment's index from its start: it meets the damage too.
      await assert.rejects(reopened.entry('acme', tickets.at(-1)!), corruptAt(active, frame));
      await assert.rejects(replayPartition(reopened.log, 0), corruptAt(active, frame));
      await reopened.stop();
      const run = await runCli(['verify', '--dir', s.dir]);
      assert.equal(run.code, 1, run.stdout + run.stderr);
      assert.ok((run.stdout + run.stderr).includes(`${active}: bad frame at byte ${frame}`), run.stdout + run.stderr);
    });

    it('a compaction that meets it fails with Corrupt and removes nothing: the damaged bytes stay for the next open to report', async (t) => {
      const s = await scratch(t);
      const first = await s.open();
      await appendMany(first, 200, 'a', 10);
      await first.close();
      const path = await damageMiddle(s.part0);
      const damaged = await readFile(path);
      const log = await s.open();
      await assert.rejects(log.compact(0), corruptIn(path));
      await log.close();
      const bytes = await readFile(path);
      assert.deepEqual(bytes.subarray(0, damaged.length), damaged, 'the segment still holds every byte (now sealed)');
      const again = await s.open(); // sealed now, so not read at open either
      await assert.rejects(readBack(again), corruptIn(path));
    });

    it('a writer that appended after it and then died: the damage lies in a sealed segment, so the next open serves every append acknowledged since, and reads through the damage meet it', async (t) => {
      const s = await scratch(t);
      const first = await s.open();
      await appendMany(first, 200, 'a');
      await first.close();
      const path = await damageMiddle(s.part0);
      const stale = await readFile(recordPath(s.dir));
      const log = await s.open();
      const after = await appendMany(log, 20, 'b');
      await log.close();
      // What a SIGKILL before the record's refresh leaves: the clean record of the first close (its segment sealed since).
      await writeFile(recordPath(s.dir), stale);
      const again = await s.open();
      assert.equal(await again.endOffset(0), 220n);
      assert.deepEqual(await readBack(again, after[0]!.offset), after);
      await assert.rejects(readBack(again), corruptIn(path));
    });

    it('its last frame damaged: not trusted, and not cut as a torn tail either (Corrupt: shorter than the record), nothing written', async (t) => {
      const s = await scratch(t);
      const first = await s.open();
      await appendMany(first, 50, 'a');
      await first.close();
      const { lastFrame } = cleanOf(await readRecord(s.dir))!;
      const path = (await segmentPaths(s.part0)).at(-1)!;
      const bytes = await readFile(path);
      bytes[lastFrame + 20] = bytes[lastFrame + 20]! ^ 0x01;
      await writeFile(path, bytes);
      const before = await filesUnder(s.dir);
      for (const readOnly of [false, true]) {
        await assert.rejects(s.open({ readOnly }), (e) => isRunlogError(e, 'Corrupt') && /records that it reached 50/.test(e.message));
        assert.deepEqual(await filesUnder(s.dir), before);
      }
    });
  });
});

describe('file log: a clean close after a full disk', () => {
  it('appends failed with ENOSPC on a reopened (unread) segment are cut by the writer; its clean close is trusted and reads exactly the acknowledged', async (t) => {
    const mountPoint = await smallTmpfs(t, '1m');
    if (mountPoint === null) return;
    onCleanup(t, async () => {
      execFileSync('umount', [mountPoint]);
      await rm(mountPoint, { recursive: true, force: true });
    });
    const dir = join(mountPoint, 'log');
    const open = () => openFileLog({ dir, onWarning: () => {} });
    const first = await open();
    const acknowledged = await appendMany(first, 40, 'a');
    await first.close();
    const log = await open();
    const big = (key: string) => rec(key, key.padEnd(16 << 10, 'x'));
    const filler = join(mountPoint, 'filler');
    fill(filler);
    for (const key of ['full-1', 'full-2']) {
      await assert.rejects(log.append(0, [big(key)]), (e) => isRunlogError(e, 'LogUnavailable') && /ENOSPC/.test(e.message));
    }
    await rm(filler);
    await log.close(); // repairs the failed write first, then closes sound
    const segment = (await segmentPaths(join(dir, 'partition-0'))).at(-1)!;
    assert.equal(cleanOf(await readRecord(dir))!.bytes, (await stat(segment)).size);
    assert.equal(await opensUnread(t, dir, false), true);
    const again = await open();
    onCleanup(t, () => again.close());
    assert.deepEqual(await readBack(again), acknowledged);
    assert.deepEqual(await again.append(0, [big('after')]), [40n]);
  });
});

describe('file log: a reached record that does not match the files is not trusted', () => {
  /** A closed log of 40 records in one segment; answers its record and the segment's frame boundaries. */
  async function closedLog(t: TestContext) {
    const s = await scratch(t);
    const log = await s.open();
    const all = await appendMany(log, 40, 'k');
    await log.close();
    const record = await readRecord(s.dir);
    return { s, all, record, clean: cleanOf(record)! };
  }

  type Edit = (record: Record<string, unknown>, clean: { segment: string; bytes: number; lastFrame: number }) => void;
  const edits: Array<[string, Edit]> = [
    ['bytes one short', (_, c) => void (c.bytes -= 1)],
    ['bytes one over', (_, c) => void (c.bytes += 1)],
    ['bytes and lastFrame past the end', (_, c) => void ((c.bytes += 100), (c.lastFrame += 100))],
    ['lastFrame one byte into the last frame', (_, c) => void (c.lastFrame += 1)],
    ['lastFrame one byte before the last frame', (_, c) => void (c.lastFrame -= 1)],
    ['lastFrame at the first frame', (_, c) => void (c.lastFrame = SEGMENT_HEADER_BYTES)],
    ['lastFrame at the header', (_, c) => void (c.lastFrame = 0)],
    ['lastFrame at the end (no frame)', (_, c) => void (c.lastFrame = c.bytes)],
    ['lastFrame 12 bytes before the end (a frame header only)', (_, c) => void (c.lastFrame = c.bytes - 12)],
    ['another segment', (_, c) => void (c.segment = '1')],
    ['end one short of the last frame', (r) => void (r['end'] = '39')],
    ['end much lower', (r) => void (r['end'] = '1')],
    ['end zero', (r) => void (r['end'] = '0')],
  ];
  for (const [name, edit] of edits) {
    it(`${name}: the open scans, and reads exactly the records the log holds`, async (t) => {
      const { s, all, record, clean } = await closedLog(t);
      edit(record, clean);
      await writeRecord(s.dir, { ...record, clean });
      assert.equal(await opensUnread(t, s.dir, false), false, 'a probe of a copy: the segment is scanned');
      for (const readOnly of [true, false]) {
        const log = await s.open({ readOnly });
        assert.equal(await log.endOffset(0), 40n);
        assert.deepEqual(await readBack(log), all);
        await log.close();
      }
      assert.deepEqual(s.warnings, []);
    });
  }

  it('end past the last frame: scanned, and the log is shorter than the record: Corrupt, nothing written', async (t) => {
    const { s, record } = await closedLog(t);
    await writeRecord(s.dir, { ...record, end: '41' });
    const before = await filesUnder(s.dir);
    for (const readOnly of [false, true]) {
      await assert.rejects(
        s.open({ readOnly }),
        (e) => isRunlogError(e, 'Corrupt') && /ends at offset 40, but .* reached 41/.test(e.message),
      );
      assert.deepEqual(await filesUnder(s.dir), before);
    }
  });

  it('a stale record of an earlier clean close, the segment grown since (a writer killed before the refresh): scanned, a torn tail cut', async (t) => {
    const s = await scratch(t);
    const first = await s.open();
    const all = await appendMany(first, 40, 'a');
    await first.close();
    const stale = await readRecord(s.dir);
    const log = await s.open();
    all.push(...(await appendMany(log, 40, 'b')));
    await log.close();
    await writeRecord(s.dir, stale);
    const path = (await segmentPaths(s.part0)).at(-1)!;
    const bytes = await readFile(path);
    await writeFile(path, Buffer.concat([bytes, bytes.subarray(cleanOf(stale)!.lastFrame, cleanOf(stale)!.bytes - 3)])); // a torn copy of a frame
    const again = await s.open();
    assert.equal(s.warnings.length, 1);
    assert.match(s.warnings[0]!, /RUNLOG_TORN_TAIL/);
    assert.equal(await again.endOffset(0), 80n);
    assert.deepEqual(await readBack(again), all);
    assert.deepEqual(await again.append(0, [rec('c', 'after')]), [80n]);
  });

  it('the segment a stale record names, sealed since and cut back to exactly the recorded size: Corrupt (no seal), nothing written', async (t) => {
    const s = await scratch(t);
    const first = await s.open();
    await appendMany(first, 40, 'a');
    await first.close();
    const stale = cleanOf(await readRecord(s.dir))!;
    const log = await s.open();
    await appendMany(log, 40, 'b');
    await log.close();
    const record = await readRecord(s.dir);
    await writeRecord(s.dir, { ...record, clean: stale }); // the newer end, the older clean: never written together
    const path = (await segmentPaths(s.part0))[0]!; // the segment the stale record names: sealed by the first append since
    await writeFile(path, (await readFile(path)).subarray(0, stale.bytes));
    const before = await filesUnder(s.dir);
    await assert.rejects(
      s.open(),
      (e) => isRunlogError(e, 'Corrupt') && e.message.includes(path) && /not the last segment/.test(e.message),
    );
    assert.deepEqual(await filesUnder(s.dir), before);
  });
});

describe('file log: a lastFrame pointing into a record value that holds a whole frame', () => {
  /**
   * A closed log of 10 records, then one whose value is a whole, CRC-valid frame of one record
   * at offset `embeddedOffset` (a frame of bytes is any tenant's input to a queue), ending the
   * segment; answers the records and the position of that embedded frame.
   */
  async function withEmbeddedFrame(t: TestContext, embeddedOffset: bigint) {
    const s = await scratch(t);
    const log = await s.open();
    const all = await appendMany(log, 10, 'k');
    const inner = { offset: embeddedOffset, key: 'inner', value: new Uint8Array(8), headers: [] };
    const embedded = encodeFrame([inner], frameBytes(recordBytes(inner.key, inner.value)));
    assert.deepEqual(await log.append(0, [{ key: 'outer', value: embedded }]), [10n]);
    await log.close();
    const record = await readRecord(s.dir);
    const clean = cleanOf(record)!;
    return { s, all, record, clean, embeddedAt: clean.bytes - embedded.length };
  }

  it('naming the true end (lastFrame alone edited): trusted, and harmless: every record, the end, the next offset are right', async (t) => {
    const { s, all, record, clean, embeddedAt } = await withEmbeddedFrame(t, 10n);
    await writeRecord(s.dir, { ...record, clean: { ...clean, lastFrame: embeddedAt } });
    const log = await s.open();
    assert.equal(await log.endOffset(0), 11n);
    assert.deepEqual((await readBack(log)).slice(0, 10), all);
    assert.deepEqual(await log.append(0, [rec('next', 'n')]), [11n]);
    await log.close();
    const again = await s.open();
    assert.deepEqual(
      (await readBack(again)).map((r) => r.key),
      [...all.map((r) => r.key), 'outer', 'next'],
    );
  });

  it(
    'FINDING: naming a lower end (lastFrame and end both edited): the open trusts the embedded frame and answers the wrong end',
    { todo: 'a record edited to point into a crafted value is trusted: see SESSION13.md (clean)' },
    async (t) => {
      const { s, all, record, clean, embeddedAt } = await withEmbeddedFrame(t, 2n);
      await writeRecord(s.dir, { ...record, end: '3', clean: { ...clean, lastFrame: embeddedAt } });
      const log = await s.open();
      assert.equal(await log.endOffset(0), 11n, 'the log holds 11 records');
      assert.deepEqual((await readBack(log)).slice(0, 10), all);
      assert.deepEqual(await log.append(0, [rec('next', 'n')]), [11n], 'the next append must not reuse offset 3');
    },
  );
});

describe('file log: only a clean close records one', () => {
  it('fsync off writes no record at all; a clean record left by an earlier close is then stale, and the next open scans', async (t) => {
    const s = await scratch(t);
    const log = await s.open({ fsync: false });
    await appendMany(log, 30, 'a');
    await log.close();
    await assert.rejects(stat(recordPath(s.dir)), { code: 'ENOENT' });

    const durable = await s.open();
    const all = await readBack(durable);
    all.push(...(await appendMany(durable, 30, 'b')));
    await durable.close();
    const record = await readFile(recordPath(s.dir), 'utf8');
    assert.ok(cleanOf(JSON.parse(record) as Record<string, unknown>));
    const unsynced = await s.open({ fsync: false });
    all.push(...(await appendMany(unsynced, 30, 'c')));
    await unsynced.close();
    assert.equal(await readFile(recordPath(s.dir), 'utf8'), record, 'the fsync-off writer left the record as it was');
    assert.equal(await opensUnread(t, s.dir, false), false);
    const again = await s.open();
    assert.deepEqual(await readBack(again), all);
  });

  it('a writer fenced by a lost lock writes no record at its close', async (t) => {
    const s = await scratch(t);
    const first = await s.open();
    await appendMany(first, 30, 'a');
    await first.close();
    const record = await readFile(recordPath(s.dir), 'utf8');
    const log = await s.open();
    const holder = lockHolder();
    process.kill(holder, 'SIGKILL');
    awaitZombie(holder);
    await assert.rejects(log.append(0, [rec('b', 'refused')]), (e) => isRunlogError(e, 'Fenced'));
    await log.close();
    assert.equal(await readFile(recordPath(s.dir), 'utf8'), record);
  });

  it('a writer that lost its lock (not knowing it: it appended nothing since) does not overwrite the record of the writer that took over', async (t) => {
    const s = await scratch(t);
    const first = await s.open();
    const all = await appendMany(first, 30, 'a');
    await first.close();
    const fenced = await s.open();
    all.push(...(await appendMany(fenced, 10, 'b'))); // its view of the segment: 40 records
    const holder = lockHolder();
    process.kill(holder, 'SIGKILL');
    awaitZombie(holder);
    const next = await s.open();
    all.push(...(await appendMany(next, 20, 'c')));
    await next.close();
    const record = await readFile(recordPath(s.dir), 'utf8');
    assert.equal((JSON.parse(record) as Record<string, unknown>)['end'], '60');
    await fenced.close(); // closes sound (no failed write), but may not record a clean close of a log it no longer holds
    assert.equal(await readFile(recordPath(s.dir), 'utf8'), record);
    assert.equal(await opensUnread(t, s.dir, false), true);
    const again = await s.open();
    assert.deepEqual(await readBack(again), all);
    assert.ok(
      s.warnings.some((w) => w.startsWith('RUNLOG_REACHED_RECORD')),
      s.warnings.join('\n'),
    );
  });

  it('a background refresh after new appends drops clean from the record', async (t) => {
    const s = await scratch(t);
    const first = await s.open();
    await appendMany(first, 30, 'a');
    await first.close();
    assert.ok(cleanOf(await readRecord(s.dir)));
    const log = await s.open();
    await appendMany(log, 10, 'b');
    const refreshed = await recordChange(s.dir, (record) => record['end'] === '40');
    assert.equal(cleanOf(refreshed), undefined, JSON.stringify(refreshed));
    assert.equal(await opensUnread(t, s.dir, true), false, 'a crash now leaves a segment the next open scans');
    await log.close();
    assert.ok(cleanOf(await readRecord(s.dir)), 'the clean close records it again');
  });
});

/** The record once `done(record)` holds, watching the directory (the refresh comes REACHED_REFRESH_MS after an append). */
async function recordChange(dir: string, done: (record: Record<string, unknown>) => boolean): Promise<Record<string, unknown>> {
  const controller = new AbortController();
  const watcher = watch(dir, { signal: controller.signal });
  try {
    const now = await readRecord(dir);
    if (done(now)) return now;
    for await (const _event of watcher) {
      const record = await readRecord(dir).catch(() => null); // the temporary file's events come first: read again at the next
      if (record !== null && done(record)) return record;
    }
    throw new Error('the watch ended');
  } finally {
    controller.abort();
  }
}
