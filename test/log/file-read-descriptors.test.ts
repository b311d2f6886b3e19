/**
 * A segment whose file could not be opened for a moment (the process out of descriptors:
 * EMFILE) reads again once it can: the failed open is not kept. Before, the rejected open was
 * kept as the segment's read handle, and every later read of the segment (closed entries, their
 * history, keyed resubmissions of them) failed with a raw EMFILE, as Internal over HTTP, until
 * a restart (the hostile tester, 2026-12-07). The failure itself is LogUnavailable, retriable.
 *
 * fs/promises' open is wrapped (the real one runs but for the one refused call).
 */
import assert from 'node:assert/strict';
import fsPromises from 'node:fs/promises';
import { syncBuiltinESMExports } from 'node:module';
import { test } from 'node:test';
import { isRunlogError } from '../../src/errors.ts';
import { openFileLog } from '../../src/log/file/file-log.ts';
import { collect, rec } from '../contract/log-records.ts';
import { onCleanup, scratchDir } from '../support/cleanup.ts';

test('a segment that could not be opened for want of descriptors reads once it can: LogUnavailable, then its records', async (t) => {
  const dir = await scratchDir(t, 'runlog-read-descriptors-');
  const first = await openFileLog({ dir, partitions: 1, fsync: false, segmentBytes: 256 });
  for (let i = 0; i < 20; i++) await first.append(0, [rec(`k${i}`, `value ${i} `.repeat(4))]);
  await first.close();
  const log = await openFileLog({ dir, partitions: 1, fsync: false, segmentBytes: 256 }); // sealed segments opened unread
  onCleanup(t, () => log.close());

  const realOpen = fsPromises.open;
  const restore = (): void => {
    fsPromises.open = realOpen;
    syncBuiltinESMExports();
  };
  onCleanup(t, restore);
  let refused = 0;
  fsPromises.open = ((path: Parameters<typeof realOpen>[0], ...rest: unknown[]) => {
    if (String(path).endsWith('00000000000000000000.log') && refused === 0) {
      refused++;
      return Promise.reject(Object.assign(new Error(`EMFILE: too many open files, open '${String(path)}'`), { code: 'EMFILE' }));
    }
    return (realOpen as (...args: unknown[]) => ReturnType<typeof realOpen>)(path, ...rest);
  }) as typeof realOpen;
  syncBuiltinESMExports();

  await assert.rejects(
    collect(log.read(0, 0n)),
    (error) => isRunlogError(error, 'LogUnavailable') && error.retriable && /EMFILE.*ulimit -n/.test(error.message),
  );
  assert.equal(refused, 1, 'the first segment was refused once');
  const records = await collect(log.read(0, 0n));
  assert.equal(records.length, 20, 'then read whole');
  assert.equal(records[0]!.key, 'k0');
  restore();
});
