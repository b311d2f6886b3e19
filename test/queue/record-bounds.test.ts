/**
 * Record bounds on the memory and file logs (the Kafka run is record-bounds.kafka.test.ts),
 * and on the file log, that a reopen replays every acknowledged entry, the largest included.
 */
import assert from 'node:assert/strict';
import { describe, it, type TestContext } from 'node:test';
import { FRAME_LIMITS, MAX_FRAME_BYTES } from '../../src/log/file/frame.ts';
import { openFileLog } from '../../src/log/file/file-log.ts';
import { RECORD_OVERHEAD_BYTES } from '../../src/log/event-log.ts';
import { openMemoryLog } from '../../src/log/memory/memory-log.ts';
import { openRunQueue } from '../../src/queue/open-run-queue.ts';
import { METADATA_LIMITS } from '../../src/queue/requests.ts';
import { snapshotView } from '../support/snapshot-view.ts';
import { recordBoundsSemantics } from '../contract/record-bounds.contract.ts';
import { FakeClock } from '../contract/fixtures.ts';
import { onCleanup, scratchDir } from '../support/cleanup.ts';

async function tempDir(t: TestContext): Promise<string> {
  const dir = await scratchDir(t, 'runlog-bounds-');
  return dir;
}

recordBoundsSemantics('the memory log', (partitions) => openMemoryLog({ partitions }));
recordBoundsSemantics('the file log', async (partitions, t) => openFileLog({ dir: await tempDir(t), partitions }));

describe('record bounds of the file log', () => {
  it("its limits keep every append's frame within what its reader accepts", () => {
    // One append is one frame: 12 bytes of frame header, 12 of payload header, 12 per record
    // besides key and value. appendBytes counts RECORD_OVERHEAD_BYTES (>= 12) per record.
    const payload = (records: number, keysAndValues: number): number => 12 + records * 12 + keysAndValues;
    assert.ok(payload(1, FRAME_LIMITS.maxRecordBytes) <= MAX_FRAME_BYTES, 'the largest record alone');
    for (const records of [1, 2, 1000]) {
      const keysAndValues = FRAME_LIMITS.maxAppendBytes - records * RECORD_OVERHEAD_BYTES;
      assert.ok(payload(records, keysAndValues) <= MAX_FRAME_BYTES, `the largest append of ${records} records`);
    }
    assert.ok(
      FRAME_LIMITS.maxRecordBytes + RECORD_OVERHEAD_BYTES <= FRAME_LIMITS.maxAppendBytes,
      'the largest record fits an append alone',
    );
  });

  it('a reopen replays every acknowledged entry, the largest included', async (t) => {
    const dir = await tempDir(t);
    const clock = new FakeClock();
    const open = () => openRunQueue({ log: { kind: 'file', dir }, clock: clock.read });
    const queue = await open();
    const metadata = Object.fromEntries(Array.from({ length: METADATA_LIMITS.maxKeys }, (_, i) => [`k${i}`, 'v'.repeat(100)]));
    const submitted = [];
    for (let i = 0; i < 5; i++) {
      submitted.push(
        await queue.submit({
          tenant: 'acme',
          thread: `t${i}`,
          agent: 'build',
          input: new Uint8Array(queue.maxInputBytes).fill(i),
          metadata,
        }),
      );
    }
    const taken = (await queue.take({ agents: ['build'], holder: 'w', ttlMs: 60_000 }))!;
    await queue.close(taken.lease, { status: 'succeeded', result: new Uint8Array(queue.maxInputBytes).fill(9) });
    const live = queue.views().map(snapshotView);
    await queue.stop();

    const reopened = await open();
    onCleanup(t, () => reopened.stop());
    assert.deepEqual(reopened.views().map(snapshotView), live);
    for (const [i, ticket] of submitted.entries()) {
      const entry = await reopened.entry('acme', ticket.entryId);
      assert.deepEqual(entry.input, new Uint8Array(reopened.maxInputBytes).fill(i));
    }
  });
});
