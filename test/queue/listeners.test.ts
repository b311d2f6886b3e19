/**
 * A caller's listener may be an async function: its failure is then the rejection of the
 * promise it returns. Like a synchronous throw, it must be reported (onWork: a
 * RUNLOG_LISTENER warning; onWarning: process.emitWarning) and never left as an unhandled
 * rejection, which ends the caller's process.
 */
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { isRunlogError } from '../../src/errors.ts';
import { openFileLog } from '../../src/log/file/file-log.ts';
import { openRunQueue } from '../../src/queue/open-run-queue.ts';
import type { RunlogWarning } from '../../src/warnings.ts';
import { escapes } from './bad-argument-rows.ts';
import { onCleanup, scratchDir } from '../support/cleanup.ts';

/** Lets pending promise reactions and process warnings run (a bounded number of turns, no timing). */
async function until(done: () => boolean): Promise<void> {
  for (let turn = 0; turn < 50 && !done(); turn++) await new Promise((resolve) => setImmediate(resolve));
}

/** Collects process warnings until the test ends. */
function processWarnings(t: { after(fn: () => void): void }): Error[] {
  const seen: Error[] = [];
  const onWarning = (warning: Error): void => void seen.push(warning);
  process.on('warning', onWarning);
  t.after(() => process.off('warning', onWarning));
  return seen;
}

describe('async listeners', () => {
  it('an async onWork listener that rejects is a RUNLOG_LISTENER warning, like one that throws', async (t) => {
    const escaped = escapes(t);
    const warnings: RunlogWarning[] = [];
    const queue = await openRunQueue({ log: { kind: 'memory' }, onWarning: (warning) => warnings.push(warning) });
    onCleanup(t, () => queue.stop());
    queue.onWork(async () => {
      throw new Error('async boom');
    });
    const ticket = await queue.submit({ tenant: 'acme', thread: 't', agent: 'build', input: 'x' });
    assert.equal((await queue.entry('acme', ticket.entryId)).status, 'open');
    await until(() => warnings.length > 0 || escaped.length > 0);
    assert.deepEqual(escaped, []);
    assert.deepEqual(warnings, [{ code: 'RUNLOG_LISTENER', message: 'an onWork listener threw: Error: async boom' }]);
  });

  it('an async onWarning that rejects sends the warning and its failure to process.emitWarning', async (t) => {
    const escaped = escapes(t);
    const seen = processWarnings(t);
    const queue = await openRunQueue({
      log: { kind: 'memory' },
      onWarning: async () => {
        throw new Error('warn boom');
      },
    });
    onCleanup(t, () => queue.stop());
    queue.onWork(() => {
      throw new Error('listener boom');
    });
    await queue.submit({ tenant: 'acme', thread: 't', agent: 'build', input: 'x' });
    await until(() => seen.length > 0 || escaped.length > 0);
    assert.deepEqual(escaped, []);
    assert.deepEqual(
      seen.map((warning) => [(warning as { code?: string }).code, warning.message]),
      [['RUNLOG_LISTENER', 'an onWork listener threw: Error: listener boom (onWarning threw: Error: warn boom)']],
    );
    assert.deepEqual((await queue.metrics()).warnings, { RUNLOG_LISTENER: 1 });
  });

  it("a file log's async onWarning that rejects does not fail the open nor escape", async (t) => {
    const escaped = escapes(t);
    const seen = processWarnings(t);
    const dir = await scratchDir(t, 'runlog-listeners-');
    await (await openFileLog({ dir, partitions: 1 })).close();
    rmSync(join(dir, 'log.json'));
    const log = await openFileLog({
      dir,
      onWarning: async () => {
        throw new Error('warn boom');
      },
    });
    await log.close();
    await until(() => seen.length > 0 || escaped.length > 0);
    assert.deepEqual(escaped, []);
    assert.equal(seen.length, 1);
    assert.equal((seen[0] as { code?: string }).code, 'RUNLOG_LOG_REPAIRED');
    assert.match(seen[0]!.message, /\(onWarning threw: Error: warn boom\)$/);
  });

  it('an async clock is refused as InvalidArgument, and its rejection does not escape', async (t) => {
    const escaped = escapes(t);
    await assert.rejects(
      openRunQueue({
        log: { kind: 'memory' },
        clock: (async () => {
          throw new Error('clock boom');
        }) as unknown as () => number,
      }),
      (error: unknown) => isRunlogError(error, 'InvalidArgument') && /clock/.test(error.message),
    );
    await until(() => escaped.length > 0);
    assert.deepEqual(escaped, []);
  });
});
