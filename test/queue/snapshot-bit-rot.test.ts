/**
 * Hostile test of a restart reading a damaged snapshot file (bit rot, a bad sector, bytes
 * inserted or lost: NOT checksummed again). The checksum must refuse it, whatever the damage
 * made the state's reader or the restore do meanwhile: no hang, no crash, no allocation the
 * file's size does not bound; a restart ignores it (RUNLOG_SNAPSHOT_IGNORED) and opens as a
 * replay would. Each damage is made to the snapshot of a partition of its own, and the
 * partitions are opened one after another in a child with a small heap (snapshot-damage.ts), so
 * one that runs the process out of memory fails its row (and the rows after it) instead of the
 * runner; one that hangs fails at the child's timeout.
 */
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { it } from 'node:test';
import { decodeSnapshot, decodeSnapshotState } from '../../src/events/snapshot-codec.ts';
import { openFileLog } from '../../src/log/file/file-log.ts';
import { openRunQueueOnLog } from '../../src/queue/open-run-queue.ts';
import { scratchDir } from '../support/cleanup.ts';
import { ARRAYS, countOffset } from '../events/snapshot-counts.ts';
import { notIgnored, openInChild, smallWorkload } from './snapshot-damage.ts';

const ROTTEN_COUNT = [0x80, 0x80, 0x80, 0x80, 0x08]; // 2^30, zigzag varint

/** Damages: each array's count rotten into 2^30 (5 bytes), and bit 3 flipped at 1/6 .. 5/6 of the file. One a partition. */
const DAMAGES: { what: string; damage: (file: Buffer) => Buffer }[] = [
  ...ARRAYS.map((field) => ({
    what: `${field}'s count rotten into 2^30`,
    damage: (file: Buffer) => {
      const snapshot = decodeSnapshot(file);
      const at = file.indexOf(Buffer.from(snapshot.state)) + countOffset(decodeSnapshotState(snapshot.state), field);
      return Buffer.concat([file.subarray(0, at), Buffer.from(ROTTEN_COUNT), file.subarray(at + ROTTEN_COUNT.length)]);
    },
  })),
  ...[1, 2, 3, 4, 5].map((sixth) => ({
    what: `bit 3 flipped at ${sixth}/6 of the file`,
    damage: (file: Buffer) => {
      const at = Math.floor((file.length * sixth) / 6);
      return Buffer.from(file.map((v, j) => (j === at ? v ^ 8 : v)));
    },
  })),
];

it(
  'a snapshot file damaged (not checksummed again) is refused by its checksum: the open neither hangs nor dies',
  { timeout: 300_000 },
  async (t) => {
    const dir = await scratchDir(t, 'runlog-snapshot-rot-');
    await smallWorkload(await openRunQueueOnLog(await openFileLog({ dir, partitions: DAMAGES.length, fsync: false })));
    const log = await openFileLog({ dir, fsync: false });
    for (const [partition, { damage }] of DAMAGES.entries()) {
      const stored = (await log.snapshots!.list(partition))[0];
      assert.ok(stored, `partition ${partition} has a snapshot`);
      await writeFile(stored.name, damage(await readFile(stored.name)));
    }
    await log.close();
    const opened = await openInChild(['file', dir], 240_000);
    assert.deepEqual(
      notIgnored(
        opened,
        DAMAGES.map((d) => d.what),
      ),
      [],
    );
  },
);
