/**
 * A record's anchor (src/log/record-anchor.ts): the same for the same key and value, different
 * for another key, another value, a tombstone and an empty value; null where the log holds no record.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { openFileLog } from '../../src/log/file/file-log.ts';
import { ANCHOR_PATTERN, recordAnchor } from '../../src/log/record-anchor.ts';
import { onCleanup, scratchDir } from '../support/cleanup.ts';

it('anchors tell records apart by key and value, a tombstone from an empty value; none past the end', async (t) => {
  const dirs = [await scratchDir(t, 'runlog-anchor-a-'), await scratchDir(t, 'runlog-anchor-b-')];
  const [a, b] = await Promise.all(dirs.map((dir) => openFileLog({ dir, partitions: 1, fsync: false })));
  onCleanup(t, async () => {
    await a!.close();
    await b!.close();
  });
  const value = Buffer.from('v');
  await a!.append(0, [
    { key: 'k', value },
    { key: 'k2', value },
    { key: 'k', value: Buffer.from('w') },
    { key: 'k', value: null },
    { key: 'k', value: Buffer.alloc(0) },
  ]);
  await b!.append(0, [{ key: 'k', value: Buffer.from('v') }]); // the same record in another log
  const anchors = await Promise.all([0n, 1n, 2n, 3n, 4n].map((offset) => recordAnchor(a!, 0, offset)));
  for (const anchor of anchors) assert.match(anchor ?? '', ANCHOR_PATTERN);
  assert.equal(new Set(anchors).size, 5, `five records, five anchors: ${anchors.join(', ')}`);
  assert.equal(await recordAnchor(b!, 0, 0n), anchors[0], 'the same key and value, the same anchor');
  assert.equal(await recordAnchor(a!, 0, 5n), null, 'past the end');
});
