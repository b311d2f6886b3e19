/**
 * The file log's snapshot store (src/log/file/snapshot-store.ts) beside the compaction that
 * shares its directory: a save clears the temporary files of snapshots it left behind, never
 * the horizon's (`compacted.tmp`), which a compaction may be writing at that moment.
 */
import assert from 'node:assert/strict';
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { it } from 'node:test';
import { openFileLog } from '../../src/log/file/file-log.ts';
import { onCleanup, scratchDir } from '../support/cleanup.ts';

it("a snapshot's save removes leftover snapshot drafts, not the compaction horizon's draft", async (t) => {
  const dir = await scratchDir(t, 'runlog-snapshot-store-');
  const log = await openFileLog({ dir, partitions: 1 });
  onCleanup(t, () => log.close());
  const snapshots = join(dir, 'snapshots', 'partition-0');
  await mkdir(snapshots, { recursive: true });
  await writeFile(join(snapshots, `${'7'.padStart(20, '0')}.snapshot.tmp`), 'a draft a crash left');
  await writeFile(join(snapshots, 'compacted.tmp'), '12\n');
  await log.snapshots!.save(0, new Uint8Array([1, 2, 3]), 0n);
  assert.deepEqual((await readdir(snapshots)).sort(), [`${'0'.padStart(20, '0')}.snapshot`, 'compacted.tmp']);
});
