/**
 * A queue reopened from a snapshot file whose ticket index has its tables filled on another
 * thread (projections/table-fill-aside.ts; the least rows for it set to 0 here, 1M by default):
 * every entry answers as before, closed ones found by seq, a keyed submission answers its closed
 * ticket (by key hash); a damaged snapshot whose restore fails while the thread runs is still
 * ignored for its checksum, the thread stopped before the file is closed, and the queue opens as
 * a replay would. Real file log, real thread.
 */
import assert from 'node:assert/strict';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { TABLES_ASIDE } from '../../projections/table-fill-aside.ts';
import { openFileLog } from '../../src/log/file/file-log.ts';
import { decodeSnapshot, decodeSnapshotState, encodeSnapshot, encodeSnapshotState } from '../../src/events/snapshot-codec.ts';
import { CHECKSUM_ASIDE_BYTES, SNAPSHOT_IGNORED } from '../../src/projector/snapshots.ts';
import { openRunQueueOnLog } from '../../src/queue/open-run-queue.ts';
import type { Entry } from '../../src/queue/types.ts';
import type { RunlogWarning } from '../../src/warnings.ts';
import { FakeClock } from '../contract/fixtures.ts';
import { onCleanup, scratchDir } from '../support/cleanup.ts';

const least = TABLES_ASIDE.minRows;
before(() => (TABLES_ASIDE.minRows = 0));
after(() => (TABLES_ASIDE.minRows = least));

test('reopened from a snapshot with its ticket tables filled aside: every entry, closed or open, and a keyed resubmission answer as before; damaged, it is ignored', async (t) => {
  const dir = await scratchDir(t, 'runlog-tables-aside-');
  const clock = new FakeClock();
  const queue = await openRunQueueOnLog(await openFileLog({ dir, partitions: 1, fsync: false }), { clock: clock.read });
  const ids: string[] = [];
  for (let i = 0; i < 30; i++) {
    const key = i % 3 === 0 ? `key-${i}` : undefined;
    const { entryId } = await queue.submit({ tenant: 'acme', thread: `t${i % 7}`, agent: 'build', input: `input ${i}`, key });
    ids.push(entryId);
    if (i >= 25) continue;
    const taken = await queue.takeEntry('acme', entryId, { holder: 'w', ttlMs: 60_000 });
    await queue.startAttempt(taken!.lease, `run-${i}`);
    await queue.close(taken!.lease, { status: i % 4 === 0 ? 'failed' : 'succeeded', result: `result ${i}` });
  }
  const entries: Entry[] = await Promise.all(ids.map((id) => queue.entry('acme', id)));
  await queue.stop();

  const reopened = async (): Promise<RunlogWarning[]> => {
    const warnings: RunlogWarning[] = [];
    const again = await openRunQueueOnLog(await openFileLog({ dir, fsync: false }), {
      clock: clock.read,
      onWarning: (w) => warnings.push(w),
      snapshots: false,
    });
    let stopped = false;
    onCleanup(t, () => (stopped ? undefined : again.stop()));
    for (const entry of entries) assert.deepEqual(await again.entry(entry.tenant, entry.entryId), entry, `entry ${entry.entryId}`);
    const resubmitted = await again.submit({ tenant: 'acme', thread: 't3', agent: 'build', input: 'input 3', key: 'key-3' });
    assert.equal(resubmitted.entryId, ids[3], 'a keyed submission answers its closed ticket');
    await again.stop();
    stopped = true;
    return warnings.filter((w) => w.code === SNAPSHOT_IGNORED);
  };
  const threads = TABLES_ASIDE.threadsStarted;
  assert.deepEqual(await reopened(), []);
  assert.equal(TABLES_ASIDE.threadsStarted, threads + 1, 'the tables were filled on a thread');

  // Padded past CHECKSUM_ASIDE_BYTES, so that the checksum too is computed aside, and a seq
  // damaged: the restore fails while the tables' thread runs, which is stopped before the
  // snapshot's file is closed; the checksum is the reason given.
  const at = join(dir, 'snapshots', 'partition-0');
  const [name] = (await readdir(at)).filter((file) => file.endsWith('.snapshot'));
  const path = join(at, name!);
  const snapshot = decodeSnapshot(await readFile(path));
  const state = decodeSnapshotState(snapshot.state);
  const padding = new Uint8Array(CHECKSUM_ASIDE_BYTES + 4096);
  state.closedIndex = [...state.closedIndex, { name: 'padding:u8', bytes: padding, strings: [] }];
  const { logId, partition, nextOffset, takenAt } = snapshot;
  const bytes = Buffer.from(encodeSnapshot({ logId, partition, nextOffset, takenAt, state: encodeSnapshotState(state) }));
  const damaged = Buffer.from(bytes);
  damaged[bytes.indexOf('seq:f64') + 8 + 7]! ^= 0x7f; // the first seq's top byte: not a seq
  await writeFile(path, damaged);
  const ignored = await reopened();
  assert.equal(TABLES_ASIDE.threadsStarted, threads + 2, 'a thread was started for the damaged one too');
  assert.equal(ignored.length, 1, JSON.stringify(ignored));
  assert.match(ignored[0]!.message, /checksum does not match/);
});
