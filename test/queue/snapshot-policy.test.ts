/**
 * The snapshot policy (src/queue/snapshot-keeper.ts) on a real file log: a backlog of open
 * entries that only grows, fed in batches, is not snapshotted whole every `everyRecords`
 * records. A snapshot is due once `everyRecords` records AND as many bytes as the latest
 * snapshot's size were appended since it, so the snapshots' sizes grow geometrically with the
 * backlog and everything snapshotted stays within about twice what was appended. Reopened
 * without a stop (from the latest of those snapshots and the records after it), the queue
 * equals a replay from zero.
 */
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { decodeSnapshot } from '../../src/events/snapshot-codec.ts';
import { RECORD_OVERHEAD_BYTES, recordBytes } from '../../src/log/event-log.ts';
import { openFileLog } from '../../src/log/file/file-log.ts';
import { replayPartition } from '../../src/projector/replay.ts';
import { openView } from '../../src/projector/snapshots.ts';
import { openRunQueueOnLog } from '../../src/queue/open-run-queue.ts';
import type { EventLog } from '../../src/log/event-log.ts';
import { scratchDir } from '../support/cleanup.ts';
import { snapshotView } from '../support/snapshot-view.ts';

const ENTRIES = 60_000;
const BATCH = 500;
const EVERY_RECORDS = 1_000;

/** The snapshots the store holds now: file name to its size and the offset it covers. */
async function heldSnapshots(dir: string, into: Map<string, { size: number; nextOffset: bigint }>): Promise<void> {
  const at = join(dir, 'snapshots', 'partition-0');
  const names = await readdir(at).catch(() => [] as string[]);
  for (const name of names) {
    if (!name.endsWith('.snapshot') || into.has(name)) continue;
    const bytes = await readFile(join(at, name));
    into.set(name, { size: bytes.byteLength, nextOffset: decodeSnapshot(bytes).nextOffset });
  }
}

/** The bytes of partition 0's records in [from, to), counted as the policy counts them (appendBytes). */
async function appendedBytes(log: EventLog, from: bigint, to: bigint): Promise<number> {
  let bytes = 0;
  for await (const record of log.read(0, from)) {
    if (record.offset >= to) break;
    bytes += recordBytes(record) + RECORD_OVERHEAD_BYTES;
  }
  return bytes;
}

test('a growing backlog of open entries fed in batches is snapshotted geometrically, not whole every everyRecords records', async (t) => {
  const dir = await scratchDir(t, 'runlog-snapshot-policy-');
  const log = await openFileLog({ dir, fsync: false });
  const queue = await openRunQueueOnLog(log, { snapshots: { everyRecords: EVERY_RECORDS, everyMs: 3_600_000 } });
  t.after(() => queue.stop());

  // Each snapshot stays in the store until two newer ones are saved, which takes at least 2 * EVERY_RECORDS records
  // (four batches): looking after every batch sees every snapshot saved.
  const seen = new Map<string, { size: number; nextOffset: bigint }>();
  const input = new Uint8Array(100).fill(7);
  for (let n = 0; n < ENTRIES; n += BATCH) {
    const requests = Array.from({ length: BATCH }, (_, i) => ({ tenant: 'acme', thread: `t${(n + i) % 16}`, agent: 'build', input }));
    const answers = await queue.submitBatch(requests);
    assert.ok(answers.every((answer) => 'ticket' in answer));
    await heldSnapshots(dir, seen);
  }
  assert.equal((await queue.metrics()).open, ENTRIES);
  const end = await log.endOffset(0);

  const snapshots = [...seen.values()].sort((a, b) => Number(a.nextOffset - b.nextOffset));
  // Records alone would take one every 1,000 records: 60 of them, each of the whole backlog.
  const everyRecordsOnly = Math.floor(ENTRIES / EVERY_RECORDS);
  assert.ok(snapshots.length >= 2, `snapshots seen: ${snapshots.length}`);
  assert.ok(snapshots.length <= 8, `${snapshots.length} snapshots for ${ENTRIES} open entries (records alone: ${everyRecordsOnly})`);
  assert.ok(snapshots[0]!.nextOffset >= BigInt(EVERY_RECORDS), 'the first after everyRecords records');
  for (let i = 1; i < snapshots.length; i++) {
    const [before, after] = [snapshots[i - 1]!, snapshots[i]!];
    assert.ok(
      after.nextOffset - before.nextOffset >= BigInt(EVERY_RECORDS),
      `snapshot ${i}: at least everyRecords records after the one before`,
    );
    const between = await appendedBytes(log, before.nextOffset, after.nextOffset);
    assert.ok(between >= before.size, `snapshot ${i}: ${between} bytes appended since the one before, of ${before.size} bytes`);
  }
  // Bounded write amplification: all snapshots together are at most about twice what was appended.
  const written = snapshots.reduce((sum, s) => sum + s.size, 0);
  const appended = await appendedBytes(log, 0n, end);
  assert.ok(written <= 2 * appended, `snapshots ${written} bytes for ${appended} bytes appended`);

  // Reopened without a stop: from the latest snapshot and the records after it, equal to a replay from zero.
  await queue.log.close();
  const reopened = await openFileLog({ dir, fsync: false });
  t.after(() => reopened.close());
  const opened = await openView(reopened, 0, () => assert.fail('no warning expected'));
  assert.ok(opened.snapshot !== null, 'opened from a snapshot');
  assert.ok(BigInt(opened.replayed) < end, 'only the records after it replayed');
  assert.deepEqual(snapshotView(opened.view), snapshotView(await replayPartition(reopened, 0)));
});
