/**
 * README's "Reading the log" example, as written there: type-checked as a user's file would be
 * (strict, against runlog's own types) and run with plain `node --import tsx` in a child process
 * over a file log a real RunQueue wrote (`runlog` pointed at this repository's src/index.ts, the
 * data directory at the test's own). It prints what the comment says, keeps its checkpoint beside
 * the log, and a second run (resuming it) counts the attempt appended since, and a third an attempt
 * whose entry was cancelled under it.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { openRunQueue } from '../../src/queue/open-run-queue.ts';
import { FakeClock } from '../contract/fixtures.ts';
import { scratchDir } from '../support/cleanup.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));

/** The first ```ts block of README's "Reading the log" section. */
function readmeExample(): string {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('\n## Reading the log\n'));
  const match = /```ts\n([\s\S]*?)```/.exec(section);
  assert.ok(match, 'README has a "Reading the log" section with a ```ts block');
  return match[1]!;
}

/** One attempt of acme that runs `runMs` on the store clock, then is closed (or its entry cancelled), written by a real RunQueue on the file log in `dir`. */
async function runOnce(dir: string, clock: FakeClock, runMs: number, end: 'close' | 'cancel' = 'close'): Promise<void> {
  const queue = await openRunQueue({ log: { kind: 'file', dir, fsync: false }, clock: clock.read });
  try {
    await queue.submit({ tenant: 'acme', thread: `order-${clock.nowMs}`, agent: 'billing', input: '{}' });
    const taken = (await queue.take({ agents: ['billing'], holder: 'w', ttlMs: 60_000 }))!;
    await queue.startAttempt(taken.lease, `run-${clock.nowMs}`);
    clock.advance(runMs);
    if (end === 'close') await queue.close(taken.lease, { status: 'succeeded' });
    else await queue.cancel('acme', taken.entry.entryId);
  } finally {
    await queue.stop();
  }
}

function typeErrors(file: string): string[] {
  const config = ts.getParsedCommandLineOfConfigFile(
    join(root, 'tsconfig.json'),
    {},
    { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} },
  )!;
  const program = ts.createProgram([file], { ...config.options, noEmit: true });
  return ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
}

describe('README: Reading the log', () => {
  it('its example type-checks, runs, prints what it says and resumes from its checkpoint', async (t) => {
    const example = readmeExample();
    assert.ok(example.split('\n').length <= 30, 'a short example');
    const dir = await scratchDir(t, 'runlog-readme-projection-');
    const data = join(dir, 'runlog-data');
    const file = join(dir, 'example.mts');
    const source = example
      .replace(`from 'runlog'`, `from ${JSON.stringify(join(root, 'src/index.ts'))}`)
      .replaceAll(`'./runlog-data'`, JSON.stringify(data));
    assert.notEqual(source, example);
    await writeFile(file, source);
    assert.deepEqual(typeErrors(file), []);

    const clock = new FakeClock();
    await runOnce(data, clock, 1_250);
    const run = async (): Promise<string> => (await promisify(execFile)(process.execPath, ['--import', 'tsx', file], { cwd: root })).stdout;
    assert.equal(await run(), "Map(1) { 'acme' => 1250 }\n");
    assert.ok(existsSync(join(data, 'projections', 'run-time.checkpoint')));
    await runOnce(data, clock, 500);
    assert.equal(await run(), "Map(1) { 'acme' => 1750 }\n");
    await runOnce(data, clock, 300, 'cancel');
    assert.equal(await run(), "Map(1) { 'acme' => 2050 }\n", 'a run its entry was cancelled under counts too');
  });
});
