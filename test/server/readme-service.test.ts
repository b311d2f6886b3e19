/**
 * The README's "Run as a service" block, as a newcomer runs it from a fresh clone (the screen
 * after `npm ci && npm start`): write the tokens file, start the server, submit with curl.
 * Its commands must work from a clone: `npx runlog` does not (the package's own bin is not
 * installed in its clone, so npx looks for a package named runlog on the registry), while
 * `npm run runlog -- ...` does. The block is run as written, with the changes a test needs:
 * the serve's arguments go to what the npm script runs (tsx src/cli/runlog.ts), its port is a
 * free one (the curl's URL follows it), and its relative paths are the scratch directory's.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { promisify } from 'node:util';
import { scratchDir } from '../support/cleanup.ts';
import { spawnServe } from './serve-child.ts';

const run = promisify(execFile);
const FROM_A_CLONE = 'npm run runlog -- serve ';

async function serviceBlock(): Promise<string> {
  const readme = await readFile(new URL('../../README.md', import.meta.url), 'utf8');
  const section = readme.split('\n## Run as a service\n')[1]?.split('\n## ')[0];
  const block = section?.match(/```sh\n([\s\S]*?)```/)?.[1];
  assert.ok(block !== undefined, 'README has a "Run as a service" section with a sh block');
  return block;
}

describe('README: Run as a service', () => {
  it('runs as written from a clone: the tokens file, npm run runlog -- serve, the curl submit', async (t) => {
    const block = await serviceBlock();
    const lines = block.split('\n');
    const serveAt = lines.findIndex((line) => line.includes(' serve '));
    const serveLine = lines[serveAt]!.replace(/\s+#.*$/, '');
    assert.ok(serveLine.startsWith(FROM_A_CLONE), `the serve command runs from a clone: ${serveLine}`);

    const dir = await scratchDir(t, 'runlog-readme-service-');
    await run('sh', ['-c', lines.slice(0, serveAt).join('\n')], { cwd: dir }); // the tokens file
    const args = serveLine
      .slice(FROM_A_CLONE.length)
      .split(/\s+/)
      .map((arg, i, all) => {
        if (all[i - 1] === '--port') return '0';
        return ['--dir', '--tokens'].includes(all[i - 1]!) ? join(dir, arg) : arg;
      });
    const { port } = await spawnServe(t, args).started();

    const curl = lines
      .slice(serveAt + 1)
      .join('\n')
      .replaceAll(':7070/', `:${port}/`);
    const { stdout } = await run('sh', ['-c', curl], { cwd: dir });
    const ticket = JSON.parse(stdout) as Record<string, unknown>;
    assert.equal(ticket.created, true, stdout);
    assert.equal(ticket.tenant, 'acme');
  });
});
