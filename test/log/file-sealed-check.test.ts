/**
 * Opening a file log reads only the active segment frame by frame; the sealed segments
 * before it are checked structurally (header, seal, first frame's header), and their frames
 * are CRC-checked by every read that meets them (recovery.ts, reader.ts). Real files,
 * damaged on disk: a flipped byte in a sealed segment opens, then fails the reads that
 * meet it (a read, the queue's replay, compaction, the read-back of a closed entry, verify)
 * with Corrupt naming file and byte; a torn active tail is still cut and reported; a sealed
 * segment cut short, extended or with a damaged seal or first frame fails the open.
 */
import assert from 'node:assert/strict';
import { appendFile, readFile, stat, truncate, writeFile } from 'node:fs/promises';
import { crc32 } from 'node:zlib';
import { join } from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import fc from 'fast-check';
import { isRunlogError } from '../../src/errors.ts';
import type { BatchedRecords, LogRecord } from '../../src/log/event-log.ts';
import { openFileLog, type FileLog } from '../../src/log/file/file-log.ts';
import { FRAME_HEADER_BYTES, SEAL_BYTES } from '../../src/log/file/frame.ts';
import { SEGMENT_HEADER_BYTES } from '../../src/log/file/segment-header.ts';
import { replayPartition } from '../../src/projector/replay.ts';
import { openRunQueueOnLog } from '../../src/queue/open-run-queue.ts';
import type { RunlogWarning } from '../../src/warnings.ts';
import { runCli } from '../cli/run-cli.ts';
import { collect, rec, text } from '../contract/log-records.ts';
import { SMALL_SEGMENTS, corruptAt, damageFrameHolding, filesUnder, flipByte, segmentPaths, writeLog } from './file-damage.ts';
import { onCleanup, scratchDir } from '../support/cleanup.ts';

/** Byte 48 + 30 lies inside a segment's first frame (its payload, past the frame's header). */
const INSIDE_FIRST_FRAME = SEGMENT_HEADER_BYTES + 30;

function opener(t: TestContext, dir: string, segmentBytes = SMALL_SEGMENTS) {
  const warnings: RunlogWarning[] = [];
  const open = async (): Promise<FileLog> => {
    const log = await openFileLog({ dir, segmentBytes, onWarning: (w) => warnings.push(w) });
    onCleanup(t, () => log.close());
    return log;
  };
  return { open, warnings };
}

/** The records of partition 0 from `from`, at most `max`. */
function readFrom(log: FileLog, from: bigint, max?: number): Promise<LogRecord[]> {
  return collect(log.read(0, from, max === undefined ? undefined : { maxRecords: max }));
}

describe('file log: a sealed segment is checked when read, not at open', () => {
  it('a flipped byte in a sealed segment: the open succeeds; every read that meets the frame fails Corrupt naming file and byte', async (t) => {
    const dir = await scratchDir(t, 'runlog-sealed-');
    await writeLog(dir, 1, 40);
    const segments = await segmentPaths(join(dir, 'partition-0'));
    assert.ok(segments.length >= 5, `several segments (${segments.length})`);
    const damaged = segments[2]!;
    await flipByte(damaged, INSIDE_FIRST_FRAME);
    const { open, warnings } = opener(t, dir);
    const log = await open();
    assert.deepEqual(warnings, [], 'nothing to repair, nothing reported');
    const damagedBase = BigInt(damaged.slice(-24, -4));

    await assert.rejects(readFrom(log, 0n), corruptAt(damaged, SEGMENT_HEADER_BYTES), 'a read from 0');
    await assert.rejects(readFrom(log, damagedBase, 1), corruptAt(damaged, SEGMENT_HEADER_BYTES), 'a read of the damaged record alone');
    await assert.rejects(log.compact(0), corruptAt(damaged, SEGMENT_HEADER_BYTES), "compaction's input");
    // Records before the damage and after its segment read as ever.
    assert.equal((await readFrom(log, 0n, Number(damagedBase))).length, Number(damagedBase));
    const nextBase = BigInt(segments[3]!.slice(-24, -4));
    assert.deepEqual(
      (await readFrom(log, nextBase)).map((r) => r.key),
      Array.from({ length: 40 - Number(nextBase) }, (_, i) => `k${Number(nextBase) + i}`),
    );
    await log.close();
    const before = await filesUnder(dir);
    const again = await opener(t, dir).open(); // still opens: the damage is met when read, not at open
    await assert.rejects(readFrom(again, 0n), corruptAt(damaged, SEGMENT_HEADER_BYTES));
    await again.close();
    assert.deepEqual(
      [...(await filesUnder(dir)).keys()].filter((path) => !path.endsWith('.compacting')),
      [...before.keys()],
      'nothing but a failed compaction output written',
    );
  });

  it('a frame whose offsets overlap the next frame, its CRC made to match: Corrupt by every read (read, batches, visit), never an offset twice', async (t) => {
    const dir = await scratchDir(t, 'runlog-overlap-');
    await writeLog(dir, 1, 40);
    const first = (await segmentPaths(join(dir, 'partition-0')))[0]!;
    // The segment's second frame (one record, at base 1) made to say offset 2: the next frame's base is 2.
    const bytes = await readFile(first);
    const second = SEGMENT_HEADER_BYTES + FRAME_HEADER_BYTES + bytes.readUInt32LE(SEGMENT_HEADER_BYTES + 8);
    assert.equal(bytes.readBigUInt64LE(second + 12), 1n);
    bytes.writeUInt32LE(1, second + 24); // its record's offset delta: 0 -> 1
    bytes.writeUInt32LE(crc32(bytes.subarray(second + 8, second + FRAME_HEADER_BYTES + bytes.readUInt32LE(second + 8))), second + 4);
    await writeFile(first, bytes);
    const third = second + FRAME_HEADER_BYTES + bytes.readUInt32LE(second + 8);
    const log = await opener(t, dir).open();
    const outOfOrder = (error: unknown): boolean =>
      corruptAt(first, third)(error) && /offset 2 out of order/.test((error as Error).message);
    await assert.rejects(readFrom(log, 0n), outOfOrder, 'read');
    await assert.rejects(
      async () => {
        for await (const batch of (log.read(0, 0n) as AsyncIterable<LogRecord> & BatchedRecords).batches!()) void batch;
      },
      outOfOrder,
      'batches',
    );
    await assert.rejects(() => (log.read(0, 0n) as AsyncIterable<LogRecord> & BatchedRecords).visit!(() => {}), outOfOrder, 'visit');
    await assert.rejects(replayPartition(log, 0), outOfOrder, 'a replay');
  });

  it('a read positioned past the damage inside the same segment meets it: Corrupt, never records skipped', async (t) => {
    const dir = await scratchDir(t, 'runlog-sealed-');
    await writeLog(dir, 1, 40);
    const segments = await segmentPaths(join(dir, 'partition-0'));
    const damaged = segments[1]!;
    const base = BigInt(damaged.slice(-24, -4));
    const end = BigInt(segments[2]!.slice(-24, -4));
    assert.ok(end - base >= 2n, 'the damaged segment holds two records or more');
    await flipByte(damaged, INSIDE_FIRST_FRAME);
    const log = await opener(t, dir).open();
    // Its first frame is damaged: no later record of the segment can be found without reading past it.
    await assert.rejects(readFrom(log, end - 1n, 1), corruptAt(damaged, SEGMENT_HEADER_BYTES));
  });

  it("a queue opened from its snapshot, past the damage, opens; the damaged closed entry's read-back fails Corrupt naming file and byte", async (t) => {
    const dir = await scratchDir(t, 'runlog-sealed-queue-');
    const first = await openFileLog({ dir, partitions: 1, segmentBytes: 2048, onWarning: () => {} });
    const queue = await openRunQueueOnLog(first, { closedCacheBytes: 0 });
    const tickets: string[] = [];
    for (let i = 0; i < 30; i++) {
      const { entryId } = await queue.submit({ tenant: 'acme', thread: `t${i}`, agent: 'a', input: `input ${i}` });
      const taken = await queue.take({ agents: ['a'], holder: 'w', ttlMs: 60_000 });
      await queue.close(taken!.lease, { status: 'succeeded', result: `result ${i}` });
      tickets.push(entryId);
    }
    await queue.stop(); // takes a snapshot of the view at the log's end
    await first.close();
    const segments = await segmentPaths(join(dir, 'partition-0'));
    assert.ok(segments.length >= 3, `several segments (${segments.length})`);
    const frame = await damageFrameHolding(segments[0]!, `input 0`); // the first entry's Submitted

    const log = await openFileLog({ dir, segmentBytes: 2048, onWarning: () => {} });
    onCleanup(t, () => log.close());
    const reopened = await openRunQueueOnLog(log, { closedCacheBytes: 0 });
    onCleanup(t, () => reopened.stop());
    const last = await reopened.entry('acme', tickets.at(-1)!);
    assert.equal(last.status, 'closed', 'an entry in an undamaged segment reads back');
    await assert.rejects(reopened.entry('acme', tickets[0]!), corruptAt(segments[0]!, frame));
    await reopened.stop();
    await log.close();

    // A replay from zero meets the damage: it fails, naming it.
    const fromZero = await openFileLog({ dir, segmentBytes: 2048, onWarning: () => {} });
    onCleanup(t, () => fromZero.close());
    await assert.rejects(replayPartition(fromZero, 0), corruptAt(segments[0]!, frame));
    await fromZero.close();

    // verify reads everything: it reports the damaged frame.
    const run = await runCli(['verify', '--dir', dir]);
    assert.equal(run.code, 1, run.stdout + run.stderr);
    assert.ok((run.stdout + run.stderr).includes(`${segments[0]!}: bad frame at byte ${frame}`), run.stdout + run.stderr);
  });

  it('a torn tail of the active segment behind sealed segments is still cut and reported', async (t) => {
    const dir = await scratchDir(t, 'runlog-sealed-');
    await writeLog(dir, 1, 40);
    const segments = await segmentPaths(join(dir, 'partition-0'));
    const active = segments.at(-1)!;
    await appendFile(active, Buffer.from('a torn write: not a frame'));
    const { open, warnings } = opener(t, dir);
    const log = await open();
    assert.deepEqual(
      warnings.map((w) => w.code),
      ['RUNLOG_TORN_TAIL'],
    );
    assert.ok(warnings[0]!.message.includes(active), warnings[0]!.message);
    assert.equal((await readFrom(log, 0n)).length, 40);
  });
});

describe('file log: a sealed segment whose structure is damaged fails the open, naming it', () => {
  const damages: Array<[string, (path: string) => Promise<void>, RegExp]> = [
    ['cut short by a byte', async (path) => truncate(path, (await stat(path)).size - 1), /not a seal/],
    ['cut at its seal (the seal removed)', async (path) => truncate(path, (await stat(path)).size - SEAL_BYTES), /not a seal/],
    ['cut inside its first frame', async (path) => truncate(path, SEGMENT_HEADER_BYTES + 5), /too short|not a seal/],
    ['cut to its header', async (path) => truncate(path, SEGMENT_HEADER_BYTES), /too short/],
    ['zeros appended after its seal', (path) => appendFile(path, Buffer.alloc(512)), /not a seal/],
    ['a byte of its seal flipped', async (path) => flipByte(path, (await stat(path)).size - 3), /not a seal/],
    ["its first frame's magic flipped", (path) => flipByte(path, SEGMENT_HEADER_BYTES), /byte 48: its first frame's header/],
  ];
  for (const [name, damage, pattern] of damages) {
    it(name, async (t) => {
      const dir = await scratchDir(t, 'runlog-sealed-open-');
      await writeLog(dir, 1, 40);
      const segments = await segmentPaths(join(dir, 'partition-0'));
      await damage(segments[1]!);
      const before = await filesUnder(dir);
      await assert.rejects(opener(t, dir).open(), (error) => {
        assert.ok(isRunlogError(error, 'Corrupt'), String(error));
        assert.ok(error.message.includes(segments[1]!), error.message);
        assert.match(error.message, pattern);
        return true;
      });
      assert.deepEqual(await filesUnder(dir), before, 'a failed open writes nothing');
    });
  }
});

describe('file log: sealed segments opened unread learn their index as reads need it', () => {
  it('property: reads from any offset, in any order, of a reopened log equal the records written', async (t) => {
    const dir = await scratchDir(t, 'runlog-sealed-learn-');
    const writer = await openFileLog({ dir, partitions: 1, segmentBytes: 300 << 10, fsync: false, onWarning: () => {} });
    const written: Array<[bigint, string, string | null]> = [];
    for (let frame = 0; frame < 400; frame++) {
      const values = Array.from({ length: 1 + (frame % 9) }, (_, i) => `${frame}.${i}:${'v'.repeat((frame * 37) % 2000)}`);
      const offsets = await writer.append(
        0,
        values.map((value, i) => rec(`k${frame}.${i}`, value)),
      );
      for (const [i, offset] of offsets.entries()) written.push([offset, `k${frame}.${i}`, values[i]!]);
    }
    await writer.close();
    assert.ok((await segmentPaths(join(dir, 'partition-0'))).length >= 4, 'several segments, each past the index interval');
    const end = BigInt(written.length);
    let log = await opener(t, dir, 300 << 10).open();
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.bigInt({ min: 0n, max: end + 2n }), fc.integer({ min: 1, max: 60 })), { minLength: 1, maxLength: 6 }),
        fc.boolean(),
        async (reads, reopen) => {
          if (reopen) {
            await log.close();
            log = await opener(t, dir, 300 << 10).open(); // every sealed segment unread again
          }
          for (const [from, max] of reads) {
            const got = (await readFrom(log, from, max)).map((r) => [r.offset, r.key, text(r)]);
            assert.deepEqual(got, written.slice(Number(from), Number(from) + max));
          }
        },
      ),
      { numRuns: 60 },
    );
  });
});
