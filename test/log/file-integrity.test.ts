/**
 * The file log proves it is whole: every piece missing, extra, renamed or edited is
 * Corrupt naming the file (never a shorter log), and the one repair it makes on its own, a
 * torn last frame cut on open, is reported. Real files in a temporary directory.
 */
import assert from 'node:assert/strict';
import { appendFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import { isRunlogError } from '../../src/errors.ts';
import { openRunQueue } from '../../src/queue/run-queue.ts';
import type { RunlogWarning } from '../../src/warnings.ts';
import { segmentPaths } from './file-damage.ts';

async function scratchDir(t: TestContext): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'runlog-integrity-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

describe('file log: reporting', () => {
  it('a torn tail cut on open is a RUNLOG_TORN_TAIL warning and is counted in metrics()', async (t) => {
    const dir = await scratchDir(t);
    const first = await openRunQueue({ log: { kind: 'file', dir }, onWarning: () => assert.fail('no warning on a whole log') });
    await first.submit({ tenant: 'acme', thread: 't', agent: 'a', input: 'x' });
    await first.stop();
    await appendFile((await segmentPaths(join(dir, 'partition-0'))).at(-1)!, Buffer.from('half a frame'));

    const warnings: RunlogWarning[] = [];
    const queue = await openRunQueue({ log: { kind: 'file', dir }, onWarning: (w) => warnings.push(w) });
    t.after(() => queue.stop());
    assert.deepEqual(warnings.map((w) => w.code), ['RUNLOG_TORN_TAIL']);
    assert.match(warnings[0]!.message, /partition-0.*torn tail of 12 bytes/);
    assert.deepEqual(queue.metrics().warnings, { RUNLOG_TORN_TAIL: 1 });
    assert.equal(queue.metrics().enqueued, 1);
  });

  it('onWarning must be a function', async (t) => {
    const dir = await scratchDir(t);
    const bad = { log: { kind: 'file', dir }, onWarning: 'stderr' } as unknown as Parameters<typeof openRunQueue>[0];
    await assert.rejects(openRunQueue(bad), (e) => isRunlogError(e, 'InvalidArgument') && /onWarning/.test(e.message));
  });
});
