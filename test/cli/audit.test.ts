/**
 * The audit commands (history, find, state, tail, export, verify) against a file log that a
 * live writer in another process holds (audit-writer.ts): every answer checked against the
 * history it wrote (audit-checks.ts), the writer unaffected, the log's files unchanged.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { describe, it } from 'node:test';
import { onCleanup, scratchDir } from '../support/cleanup.ts';
import type { Scenario } from './audit-scenario.ts';
import { checkFind, checkHistory, checkState, checkTail } from './audit-checks.ts';

const WRITER = join(import.meta.dirname, 'audit-writer.ts');

async function liveWriter(t: import('node:test').TestContext) {
  const dir = await scratchDir(t, 'runlog-audit-');
  const writer = spawn(process.execPath, ['--import', 'tsx', WRITER, dir], { stdio: ['pipe', 'pipe', 'inherit'] });
  onCleanup(t, () => writer.kill());
  const lines = createInterface({ input: writer.stdout })[Symbol.asyncIterator]();
  const next = async (): Promise<string> => (await lines.next()).value as string;
  const scenario = JSON.parse(await next()) as Scenario;
  const stop = async (): Promise<void> => {
    writer.stdin.end('stop\n');
    assert.equal(await next(), 'stopped');
    assert.deepEqual(await once(writer, 'exit'), [0, null]);
  };
  const more = async (): Promise<string> => {
    writer.stdin.write('more\n');
    return (await next()).replace('submitted ', '');
  };
  return { dir, scenario, stop, more };
}

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
