/**
 * A large snapshot file (a state of CHECKSUM_ASIDE_BYTES or more) has its checksum computed on
 * another thread while the queue reads and restores it (src/projector/snapshots.ts): whole, it
 * is served from; with one byte flipped anywhere in it, or a damaged column that the restore
 * trips on first, it is ignored with RUNLOG_SNAPSHOT_IGNORED naming the checksum, and the queue
 * opens as a replay would. Real file log; the state is made large by a padding column the
 * ticket index does not read.
 */
import assert from 'node:assert/strict';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { decodeSnapshot, decodeSnapshotState, encodeSnapshot, encodeSnapshotState } from '../../src/events/snapshot-codec.ts';
import { openFileLog } from '../../src/log/file/file-log.ts';
import { CHECKSUM_ASIDE_BYTES, SNAPSHOT_IGNORED } from '../../src/projector/snapshots.ts';
import { openRunQueueOnLog } from '../../src/queue/open-run-queue.ts';
import type { Entry } from '../../src/queue/types.ts';
import type { RunlogWarning } from '../../src/warnings.ts';
import { FakeClock } from '../contract/fixtures.ts';
import { onCleanup, scratchDir } from '../support/cleanup.ts';

/** A stopped queue's log (12 closed tickets, 2 open) whose snapshot is padded past CHECKSUM_ASIDE_BYTES: its dir, path and entries. */
async function written(t: TestContext): Promise<{ dir: string; path: string; bytes: Buffer; entries: Entry[] }> {
  const dir = await scratchDir(t, 'runlog-checksum-aside-');
  const queue = await openRunQueueOnLog(await openFileLog({ dir, partitions: 1, fsync: false }), { clock: new FakeClock().read });
  const ids: string[] = [];
  for (let i = 0; i < 14; i++) {
    const { entryId } = await queue.submit({ tenant: 'acme', thread: `t${i}`, agent: 'build', input: `input ${i}` });
    ids.push(entryId);
    if (i >= 12) continue;
    const taken = await queue.takeEntry('acme', entryId, { holder: 'w', ttlMs: 60_000 });
    await queue.startAttempt(taken!.lease, `run-${i}`);
    await queue.close(taken!.lease, { status: 'succeeded', result: `result ${i}` });
  }
  const entries = await Promise.all(ids.map((id) => queue.entry('acme', id)));
  await queue.stop();
  const at = join(dir, 'snapshots', 'partition-0');
  const [name] = (await readdir(at)).filter((file) => file.endsWith('.snapshot'));
  const path = join(at, name!);
  const snapshot = decodeSnapshot(await readFile(path));
  const state = decodeSnapshotState(snapshot.state);
  assert.ok(state.closedIndex.length > 0, 'the snapshot keeps the ticket index');
  const padding = new Uint8Array(CHECKSUM_ASIDE_BYTES + 4096).map((_, i) => i & 0xff);
  state.closedIndex = [...state.closedIndex, { name: 'padding:u8', bytes: padding, strings: [] }];
  const { logId, partition, nextOffset, takenAt } = snapshot;
  const bytes = Buffer.from(encodeSnapshot({ logId, partition, nextOffset, takenAt, state: encodeSnapshotState(state) }));
  await writeFile(path, bytes);
  return { dir, path, bytes, entries };
}

/** Opens the queue again, checks every entry answers as before, stops it; answers the snapshots it ignored. */
async function reopened(t: TestContext, dir: string, entries: Entry[]): Promise<RunlogWarning[]> {
  const warnings: RunlogWarning[] = [];
  const queue = await openRunQueueOnLog(await openFileLog({ dir, fsync: false }), {
    clock: new FakeClock().read,
    onWarning: (w) => warnings.push(w),
    snapshots: false,
  });
  let stopped = false;
  onCleanup(t, () => (stopped ? undefined : queue.stop()));
  for (const before of entries) assert.deepEqual(await queue.entry(before.tenant, before.entryId), before, `entry ${before.entryId}`);
  await queue.stop();
  stopped = true;
  return warnings.filter((w) => w.code === SNAPSHOT_IGNORED);
}

test('a large snapshot, its checksum computed aside: whole, it is served from; a byte flipped in it, or a column damaged, and it is ignored for its checksum', async (t) => {
  const { dir, path, bytes, entries } = await written(t);
  assert.deepEqual(await reopened(t, dir, entries), []);

  // A flipped byte in the padding (nothing but the checksum can tell), then one in the middle of the index's columns (the restore may trip first).
  const seqColumn = bytes.indexOf('seq:f64');
  for (const at of [bytes.length - 1_000, seqColumn + 12]) {
    const damaged = Buffer.from(bytes);
    damaged[at]! ^= 0x40;
    await writeFile(path, damaged);
    const ignored = await reopened(t, dir, entries);
    assert.equal(ignored.length, 1, `byte ${at}: ${JSON.stringify(ignored)}`);
    assert.match(ignored[0]!.message, /checksum does not match/);
  }
});
