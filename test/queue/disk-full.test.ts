/**
 * A full disk heals: on a small real tmpfs, the RunQueue over a file log answers the commands
 * whose appends fail with ENOSPC with an error; once space is freed, new commands succeed
 * without a restart, and a reopen replays exactly the acknowledged entries.
 *
 * Mounting needs CAP_SYS_ADMIN (root here); where `mount -t tmpfs` is not permitted the test
 * says so and skips.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { isRunlogError } from '../../src/errors.ts';
import { openFileLog } from '../../src/log/file/file-log.ts';
import { type RunQueue } from '../../src/queue/run-queue.ts';
import { openRunQueue } from '../../src/queue/open-run-queue.ts';
import { collect } from '../contract/log-records.ts';
import { allEvents, assertReplayEqualsLive, FakeClock, submitOf } from '../contract/fixtures.ts';
import { onCleanup } from '../support/cleanup.ts';
import { fill, smallTmpfs } from '../support/tmpfs.ts';

/** Big enough that its append needs new pages of the file system (a small one could fit in the segment's last page). */
const bigSubmit = (thread: string) => submitOf('acme', thread, { input: 'x'.repeat(16 << 10) });

describe('disk full, then freed', () => {
  it('the queue answers failed commands with an error, heals once space is freed, and a reopen replays exactly what was acknowledged', async (t) => {
    const mountPoint = await smallTmpfs(t, '1m');
    if (mountPoint === null) return;
    const dir = join(mountPoint, 'log');
    const open = () => openRunQueue({ log: { kind: 'file', dir }, clock: new FakeClock().read, onWarning: () => {} });
    let queue: RunQueue | null = await open();
    onCleanup(t, async () => {
      await queue?.stop();
      execFileSync('umount', [mountPoint]);
      await rm(mountPoint, { recursive: true, force: true });
    });
    const acknowledged: string[] = [];
    for (let i = 0; i < 3; i++) {
      await queue.submit(bigSubmit(`before-${i}`));
      acknowledged.push(`before-${i}`);
    }

    const filler = join(mountPoint, 'filler');
    fill(filler);
    for (let i = 0; i < 3; i++) {
      await assert.rejects(queue.submit(bigSubmit(`during-${i}`)), (e) => isRunlogError(e, 'LogUnavailable') && /ENOSPC/.test(e.message));
    }

    await rm(filler);
    for (let i = 0; i < 3; i++) {
      await queue.submit(bigSubmit(`after-${i}`));
      acknowledged.push(`after-${i}`);
    }
    await assertReplayEqualsLive(queue);
    await queue.stop();

    queue = await open();
    const submitted = (await allEvents(queue.log)).filter((e) => e.type === 'Submitted').map((e) => e.thread);
    assert.deepEqual(submitted, acknowledged);
    for (const thread of acknowledged) assert.equal((await queue.openEntries('acme', thread)).length, 1, thread);
  });

  it('the file log heals also when its segment rolls fail (a roll before every append), and closes clean while the disk is full', async (t) => {
    const mountPoint = await smallTmpfs(t, '1m');
    if (mountPoint === null) return;
    const dir = join(mountPoint, 'log');
    const warnings: string[] = [];
    const open = () => openFileLog({ dir, segmentBytes: 4096, onWarning: (w) => warnings.push(w.message) });
    let log = await open();
    onCleanup(t, async () => {
      await log.close();
      execFileSync('umount', [mountPoint]);
      await rm(mountPoint, { recursive: true, force: true });
    });
    const value = new Uint8Array(6000).fill(7);
    const append = (key: string) => log.append(0, [{ key, value }]);
    const acknowledged: string[] = [];
    for (const key of ['a', 'b', 'c']) {
      await append(key);
      acknowledged.push(key);
    }
    const filler = join(mountPoint, 'filler');
    fill(filler);
    for (const key of ['x', 'y', 'z'])
      await assert.rejects(append(key), (e) => isRunlogError(e, 'LogUnavailable') && /ENOSPC/.test(e.message));
    // Closed while the disk is still full: the close repairs what the failures left (cutting back needs no space).
    await log.close();
    // The only trouble the full disk leaves the close: its record of how far the partition reached (a warning, not a failure).
    assert.ok(
      warnings.every((w) => /reached-0\.json: recording that partition 0 reached offset 3 failed: .*ENOSPC/.test(w)),
      warnings.join('\n'),
    );
    warnings.length = 0;
    await rm(filler);
    log = await open();
    assert.deepEqual(warnings, [], 'the reopen found nothing to repair');
    for (const key of ['d', 'e', 'f']) {
      await append(key);
      acknowledged.push(key);
    }
    await log.close();
    log = await open();
    const records = await collect(log.read(0, 0n));
    assert.deepEqual(
      records.map((r) => r.key),
      acknowledged,
    );
    assert.deepEqual(
      records.map((r) => r.offset),
      acknowledged.map((_, i) => BigInt(i)),
    );
  });
});
