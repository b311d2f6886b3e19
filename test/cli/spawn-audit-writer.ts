/** audit-writer.ts in a child process on a fresh file log: the scenario it wrote, and its "more" and "stop". */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { TestContext } from 'node:test';
import { onCleanup, scratchDir } from '../support/cleanup.ts';
import type { Scenario } from './audit-scenario.ts';

const WRITER = join(import.meta.dirname, 'audit-writer.ts');

export interface LiveWriter {
  dir: string;
  scenario: Scenario;
  /** Submits one more entry: its ticket. */
  more(): Promise<string>;
  stop(): Promise<void>;
}

/** `snapshotEvery`: the writer's queue snapshots its views every so many records (default: the queue's default). */
export async function liveWriter(t: TestContext, snapshotEvery?: number): Promise<LiveWriter> {
  const dir = await scratchDir(t, 'runlog-audit-');
  const args = snapshotEvery === undefined ? [] : [String(snapshotEvery)];
  const writer = spawn(process.execPath, ['--import', 'tsx', WRITER, dir, ...args], { stdio: ['pipe', 'pipe', 'inherit'] });
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
