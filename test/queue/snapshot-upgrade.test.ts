/**
 * A log written by an older runlog, whose snapshots are in the v1 format (test/fixtures/v1-log,
 * written by write-v1-log.ts at 7c7126c), opened by this one: each partition's snapshot is read
 * or ignored with RUNLOG_SNAPSHOT_IGNORED, never trusted wrongly: the view opened equals the
 * replay from zero, and every entry answers as the old version answered (expected.json). Then
 * the queue works on, stops (a snapshot in today's format) and opens again from it, the same.
 */
import assert from 'node:assert/strict';
import { cp, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { it } from 'node:test';
import { openFileLog } from '../../src/log/file/file-log.ts';
import { replayPartition } from '../../src/projector/replay.ts';
import { openView } from '../../src/projector/snapshots.ts';
import { openRunQueue } from '../../src/queue/open-run-queue.ts';
import type { RunlogWarning } from '../../src/warnings.ts';
import { scratchDir } from '../support/cleanup.ts';
import { snapshotView } from '../support/snapshot-view.ts';

const FIXTURE = join(import.meta.dirname, '../fixtures/v1-log');
const bytesAsBase64 = (_: string, value: unknown): unknown =>
  value instanceof Uint8Array ? { bytes: Buffer.from(value).toString('base64') } : value;

/** Opens each partition as a restart does and from zero; returns the names of the snapshots used and the warnings. */
async function opened(dir: string): Promise<{ used: (string | null)[]; warnings: RunlogWarning[] }> {
  const warnings: RunlogWarning[] = [];
  const log = await openFileLog({ dir, onWarning: (warning) => warnings.push(warning) });
  const used: (string | null)[] = [];
  try {
    for (let p = 0; p < 2; p++) {
      const view = await openView(log, p, (warning) => warnings.push(warning));
      used.push(view.snapshot);
      assert.deepEqual(snapshotView(view.view), snapshotView(await replayPartition(log, p)), `partition ${p} (${view.snapshot})`);
    }
  } finally {
    await log.close();
  }
  return { used, warnings };
}

async function answersAsBefore(dir: string, expected: Record<string, Record<string, unknown>>): Promise<void> {
  const queue = await openRunQueue({ log: { kind: 'file', dir }, snapshots: false });
  try {
    for (const [entryId, entry] of Object.entries(expected)) {
      const now = await queue.entry(entry['tenant'] as string, entryId);
      assert.deepEqual(JSON.parse(JSON.stringify(now, bytesAsBase64)), entry, `entry ${entryId}`);
    }
  } finally {
    await queue.stop();
  }
}

it('a v1 snapshot after an upgrade is read or safely ignored; answers equal the old ones and a replay', { timeout: 120_000 }, async (t) => {
  const dir = await scratchDir(t, 'runlog-snapshot-upgrade-');
  await cp(FIXTURE, dir, { recursive: true });
  const expected = JSON.parse(await readFile(join(FIXTURE, 'expected.json'), 'utf8')) as Record<string, Record<string, unknown>>;
  const before = await opened(dir);
  const ignored = before.warnings.filter((warning) => warning.code === 'RUNLOG_SNAPSHOT_IGNORED');
  t.diagnostic(`v1 snapshots used: ${before.used.join(', ')}; ignored: ${ignored.map((warning) => warning.message).join(' | ') || 'none'}`);
  assert.deepEqual(
    before.warnings.filter((warning) => warning.code !== 'RUNLOG_SNAPSHOT_IGNORED'),
    [],
    'nothing else to warn about',
  );
  await answersAsBefore(dir, expected);

  // Work on, stop (a snapshot in today's format), open again: that snapshot is used.
  const queue = await openRunQueue({ log: { kind: 'file', dir } });
  for (let i = 0; i < 20; i++) await queue.submit({ tenant: 'acme', thread: `after-${i % 3}`, agent: 'build', input: `after ${i}` });
  await queue.stop();
  const after = await opened(dir);
  assert.deepEqual(after.warnings, [], 'the snapshots written today are read');
  assert.ok(after.used.every((name) => name !== null));
  await answersAsBefore(dir, expected);
});
