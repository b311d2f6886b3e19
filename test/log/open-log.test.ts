import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isRunlogError } from '../../src/errors.ts';
import type { LogConfig } from '../../src/log/event-log.ts';
import { openLog } from '../../src/log/open-log.ts';
import { onCleanup, scratchDir } from '../support/cleanup.ts';

describe('openLog', () => {
  it('opens a memory log', async (t) => {
    const log = await openLog({ kind: 'memory' }, 3);
    onCleanup(t, () => log.close());
    assert.equal(log.kind, 'memory');
    assert.equal(log.partitions, 3);
  });

  it('opens a file log in the given directory', async (t) => {
    const dir = await scratchDir(t, 'runlog-open-log-');
    const log = await openLog({ kind: 'file', dir, fsync: false }, 2);
    onCleanup(t, () => log.close());
    assert.equal(log.kind, 'file');
    assert.deepEqual(await log.append(1, [{ key: 'k', value: null }]), [0n]);
  });

  it('refuses an unknown kind and a bad partition count', async () => {
    await assert.rejects(openLog({ kind: 'nope' } as unknown as LogConfig, 1), (e) => isRunlogError(e, 'InvalidArgument'));
    await assert.rejects(openLog({ kind: 'memory' }, 0), (e) => isRunlogError(e, 'InvalidArgument'));
    const misspelt = { kind: 'file', dir: '/nonexistent/never-created', fsinc: false } as unknown as LogConfig;
    await assert.rejects(openLog(misspelt, 1), (e) => isRunlogError(e, 'InvalidArgument') && /fsinc/.test(e.message));
  });
});
