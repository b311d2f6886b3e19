import assert from 'node:assert/strict';
import { open, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { it } from 'node:test';
import { batchesOf, type LogRecord } from '../../src/log/event-log.ts';
import { openFileLog } from '../../src/log/file/file-log.ts';
import { decodeFrame, encodeFrame, frameBytes, recordBytes } from '../../src/log/file/frame.ts';
import { readFrames } from '../../src/log/file/frame-reader.ts';
import { collect, rec, text } from '../contract/log-records.ts';
import { onCleanup, scratchDir } from '../support/cleanup.ts';

it('file log batches hold the records read returns, in order, from any offset, across frames, chunks and segments', async (t) => {
  const dir = await scratchDir(t, 'runlog-file-batches-');
  const log = await openFileLog({ dir, partitions: 1, segmentBytes: 4096, fsync: false });
  onCleanup(t, () => log.close());
  for (let frame = 0; frame < 40; frame++) {
    const records = Array.from({ length: 1 + (frame % 7) }, (_, i) =>
      rec(`k${frame}-${i}`, i === 3 ? null : `v${frame}-${i}-${'x'.repeat(frame * 13)}`),
    );
    await log.append(0, records);
  }
  for (const from of [0n, 1n, 57n, 150n, 1000n]) {
    const expected = (await collect(log.read(0, from))).map((r) => [r.offset, r.key, text(r)]);
    const seen: unknown[] = [];
    // Values are decoded at once, as the batches contract asks.
    for await (const batch of batchesOf(log.read(0, from))) for (const r of batch) seen.push([r.offset, r.key, text(r)]);
    assert.deepEqual(seen, expected);
  }
});

it("readFrames through one reused buffer finds every frame, also frames larger than a chunk, a read's frames in one run", async (t) => {
  const dir = await scratchDir(t, 'runlog-frame-reuse-');
  const records: LogRecord[] = [];
  const frames: Buffer[] = [];
  let offset = 0n;
  for (let f = 0; f < 30; f++) {
    const batch = Array.from({ length: 1 + (f % 5) }, (_, i): LogRecord => ({
      offset: offset++,
      key: `k${f}.${i}`,
      value: Buffer.from(`v${f}.${i}`.repeat(1 + ((f * 7) % 40))),
    }));
    records.push(...batch);
    frames.push(encodeFrame(batch, frameBytes(batch.reduce((n, r) => n + recordBytes(r.key, r.value), 0))));
  }
  const path = join(dir, 'frames');
  await writeFile(path, Buffer.concat(frames));
  const handle = await open(path, 'r');
  onCleanup(t, () => handle.close());
  const size = (await handle.stat()).size;
  for (const chunkBytes of [64, 100, 1000, 1 << 20]) {
    const seen: unknown[] = [];
    let runs = 0;
    const reading = readFrames(handle, 0, size, chunkBytes, true);
    let step = await reading.next();
    for (; !step.done; step = await reading.next()) {
      runs++;
      assert.ok(step.value.length > 0, 'a run holds at least one frame');
      for (const { buf, pos, end } of step.value)
        assert.ok(decodeFrame(buf, pos, end, 0n, (r) => seen.push([r.offset, r.key, Buffer.from(r.value!).toString()])));
    }
    assert.deepEqual(step.value, { kind: 'end', filePos: size });
    // Every frame a read brought comes in one run: a chunk holding the whole file, one run.
    if (chunkBytes >= size) assert.equal(runs, 1);
    assert.deepEqual(
      seen,
      records.map((r) => [r.offset, r.key, Buffer.from(r.value!).toString()]),
    );
  }
});
