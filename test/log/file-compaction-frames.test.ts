/**
 * A compaction writes frames of about the segment index's interval (64 KiB), not 1 MiB ones:
 * reading one record back reads and CRC-checks the whole frame holding it (src/log/file/compaction.ts).
 */
import assert from 'node:assert/strict';
import { open, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { it } from 'node:test';
import { openFileLog } from '../../src/log/file/file-log.ts';
import { readFrames } from '../../src/log/file/frame-reader.ts';
import { SEGMENT_HEADER_BYTES } from '../../src/log/file/segment-header.ts';
import { onCleanup, scratchDir } from '../support/cleanup.ts';

const RECORD_VALUE_BYTES = 1000;

it('a compacted segment holds frames of at most about 64 KiB, however much it keeps', async (t) => {
  const dir = await scratchDir(t, 'runlog-compaction-frames-');
  const log = await openFileLog({ dir, partitions: 1, fsync: false, segmentBytes: 4 << 20 });
  onCleanup(t, () => log.close());
  const value = Buffer.alloc(RECORD_VALUE_BYTES, 7);
  for (let batch = 0; batch < 10; batch++) {
    await log.append(
      0,
      Array.from({ length: 500 }, (_, i) => ({ key: `k-${batch}-${i}`, value })),
    );
  }
  await log.append(0, [{ key: 'last', value }]); // after a roll, below: the compaction's segments are sealed
  await log.compact(0);
  const partitionDir = join(dir, 'partition-0');
  const frameSizes: number[] = [];
  for (const name of (await readdir(partitionDir)).filter((file) => file.endsWith('.log')).sort()) {
    const handle = await open(join(partitionDir, name), 'r');
    try {
      const frames = readFrames(handle, SEGMENT_HEADER_BYTES, (await handle.stat()).size);
      for (let step = await frames.next(); !step.done; step = await frames.next())
        for (const frame of step.value) frameSizes.push(frame.end - frame.pos);
    } finally {
      await handle.close();
    }
  }
  const kept = frameSizes.reduce((sum, size) => sum + size, 0);
  assert.ok(kept > 4 << 20, `the compaction kept ${kept} bytes of frames`);
  const largest = Math.max(...frameSizes);
  assert.ok(largest <= (64 << 10) + 2 * RECORD_VALUE_BYTES, `the largest frame holds ${largest} bytes`);
});
