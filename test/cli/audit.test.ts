/**
 * The audit commands (history, find, state, tail, export, verify) against a file log that a
 * live writer in another process holds (audit-writer.ts): every answer checked against the
 * history it wrote (audit-checks.ts), the writer unaffected, the log's files unchanged.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { checkFind, checkHistory, checkState, checkTail } from './audit-checks.ts';
import { liveWriter } from './spawn-audit-writer.ts';

describe('runlog audit commands on a live file log', () => {
  it('history, find, state --at and tail (filtered) answer what the writer did', async (t) => {
    const { dir, scenario, stop, more } = await liveWriter(t);
    const at = ['--dir', dir];
    await checkHistory(at, scenario);
    await checkFind(at, scenario);
    await checkState(at, scenario);
    await checkTail(at, scenario);
    const late = await more();
    assert.match((await (await import('./run-cli.ts')).runCli(['find', ...at, '--thread', 'late-0'])).stdout, new RegExp(`^${late} `));
    await stop();
  });
});
