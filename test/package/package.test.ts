/**
 * The package as a user gets it: `npm pack`, the tarball installed into a scratch project
 * ("type": "module") from npm's cache, then, with plain `node` (no tsx) and a default `tsc --init`
 * setup: the README's example and its Worker compiled and run, the `runlog` bin (`runlog serve`
 * too), the ticket tables' thread (a worker script of the build's own), an import from CommonJS. The tarball ships the build, the schemas, README and LICENSE only. One test: packing
 * builds (tsc) and installing takes most of a minute.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { it, type TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import { onCleanup, scratchDir } from '../support/cleanup.ts';
import { childNpmEnv } from '../support/npm-env.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));
const require = createRequire(import.meta.url);
const TSC = require.resolve('typescript/bin/tsc');
const TYPES_NODE_VERSION: string = require('@types/node/package.json').version;

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

function run(command: string, args: string[], cwd: string): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env: childNpmEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

async function succeeds(command: string, args: string[], cwd: string): Promise<string> {
  const ran = await run(command, args, cwd);
  assert.equal(ran.code, 0, `${command} ${args.join(' ')} exited ${ran.code}\n${ran.stdout}\n${ran.stderr}`);
  return ran.stdout;
}

/** The README's code blocks: the library example (under "## Example") and the Worker's. */
async function readmeExamples(): Promise<{ library: string; worker: string }> {
  const blocks = [...(await readFile(join(root, 'README.md'), 'utf8')).matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]!);
  const library = blocks.find((block) => block.includes('openRunQueue({ log:'));
  const worker = blocks.find((block) => block.includes('new Worker(queue'));
  assert.ok(library !== undefined && worker !== undefined, 'README has the library example and the Worker example');
  return { library, worker };
}

/** The README's Worker block, given a queue to work on and an entry to run to completion. */
function workerProgram(readmeWorker: string): string {
  return `import { openRunQueue } from 'runlog';
const queue = await openRunQueue({ log: { kind: 'file', dir: './worker-data' } });
${readmeWorker}
const ticket = await queue.submit({ tenant: 'acme', thread: 'order-18', agent: 'billing', input: '{"amount":7}' });
const closed = await queue.awaitClosed('acme', ticket.entryId, { timeoutMs: 30_000 });
stop.abort();
await running;
console.log(closed?.outcome, Buffer.from(closed!.result!).toString('utf8'), worker.metrics().succeeded);
// @ts-expect-error a tenant is a string: the package's types are checked, not any
await queue.submit({ tenant: 17, thread: 't', agent: 'billing', input: '' }).catch((e: Error) => console.log(e.name));
await queue.stop();
`;
}

/** `runlog serve` from the installed bin, on a free loopback port: its url, from the serve.listening log line. */
async function startServe(t: TestContext, bin: string, cwd: string): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(bin, ['serve', '--port', '0', '--dir', 'serve-data'], { cwd, env: childNpmEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = once(child, 'exit');
  onCleanup(t, async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  });
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const lines = createInterface({ input: child.stdout! });
  for await (const line of lines) {
    const record = line.startsWith('{') ? (JSON.parse(line) as { event?: string; url?: string }) : {};
    if (record.event === 'serve.listening' && record.url !== undefined) return { url: record.url, child };
  }
  throw new Error(`runlog serve ended before it listened (exit ${child.exitCode}): ${stderr}`);
}

/** Another process's Worker through the client: connect to the server, submit, run it to completion. */
const REMOTE_WORKER = `import { connect, Worker } from 'runlog';

const queue = await connect({ url: process.argv[2]! });
const worker = new Worker(queue, { concurrency: 2 });
worker.handle('mail', async ({ input }) => \`sent \${Buffer.from(input).toString('utf8')}\`);
const stop = new AbortController();
const running = worker.run(stop.signal);
const ticket = await queue.submit({ tenant: 'acme', thread: 'user-1', agent: 'mail', input: 'welcome' });
const closed = await queue.awaitClosed('acme', ticket.entryId, { timeoutMs: 30_000 });
stop.abort();
await running;
await queue.stop();
console.log(closed?.outcome, Buffer.from(closed!.result!).toString('utf8'));
`;

const FROM_COMMONJS = `const assert = require('node:assert/strict');
assert.throws(() => require('runlog'), { code: 'ERR_PACKAGE_PATH_NOT_EXPORTED' });
import('runlog').then(({ openRunQueue, Worker }) => console.log(typeof openRunQueue, typeof Worker));
`;

/**
 * The installed build's ticket tables filled on a thread (projections/table-fill-aside.js runs
 * its sibling table-fill-worker.js, with plain node): three tickets' columns written to a file
 * as a snapshot holds them, the least rows for a thread set to 0.
 */
const TABLES_ASIDE_FROM_DIST = `import { openSync, writeFileSync } from 'node:fs';
const dist = new URL('./node_modules/runlog/dist/projections/', import.meta.url);
const { TicketIndex } = await import(new URL('ticket-index.js', dist));
const { toSnapshotColumns } = await import(new URL('snapshot-columns.js', dist));
const { fillTablesAside } = await import(new URL('table-fill-aside.js', dist));
const index = new TicketIndex();
for (const seq of [1, 2, 3]) {
  const ticket = { seq, tenant: 't', outcome: 'succeeded', closedAt: seq, keyHash: seq === 2 ? 7 : null, runHashes: [seq], deferredAttempts: 0 };
  index.add(ticket, { submittedOffset: seq * 10, closeOffset: seq * 10 + 2, attemptOffsets: [seq * 10 + 1] });
}
let position = 0;
const columns = toSnapshotColumns(index.toColumns()).map(({ name, bytes, strings }) => {
  const column = { name, strings, position, byteLength: bytes.byteLength, bytes };
  position += bytes.byteLength;
  return column;
});
writeFileSync('columns', Buffer.concat(columns.map((column) => column.bytes)));
const tables = await fillTablesAside(openSync('columns', 'r'), columns, 0).tables;
console.log(tables.bySeq.size, tables.byKey.size, tables.byRun.size);
`;

function assertShipsOnly(files: readonly string[]): void {
  for (const wanted of ['LICENSE', 'README.md', 'package.json', 'dist/src/index.js', 'dist/src/index.d.ts', 'dist/src/cli/runlog.js']) {
    assert.ok(files.includes(wanted), `the tarball has ${wanted}`);
  }
  assert.ok(files.includes('dist/schemas/Submitted.v1.avsc'), 'the schemas, where src/events/schemas.js looks');
  assert.ok(files.includes('dist/src/server/console/index.html'), "the web console's files, where src/server/console-files.js looks");
  const stray = files.filter((f) => !['LICENSE', 'README.md', 'package.json'].includes(f) && !f.startsWith('dist/'));
  assert.deepEqual(stray, [], 'nothing outside dist/ but README, LICENSE and package.json');
  const sources = files.filter((f) => /(^|\/)(test|bench)\//.test(f) || (f.endsWith('.ts') && !f.endsWith('.d.ts')));
  assert.deepEqual(sources, [], 'no tests, benchmarks or TypeScript sources');
}

it('the packed tarball installs into a scratch project and runs the README with plain node, its bin, tsc and CommonJS', async (t) => {
  const dir = await scratchDir(t, 'runlog-package-');
  const [packed] = JSON.parse(await succeeds('npm', ['pack', '--json', '--pack-destination', dir], root)) as [
    { filename: string; files: { path: string }[] },
  ];
  assertShipsOnly(packed.files.map((f) => f.path));
  const declarations = packed.files.filter((f) => f.path.endsWith('.d.ts'));
  for (const { path } of declarations) {
    const text = await readFile(join(root, path), 'utf8');
    assert.doesNotMatch(text, /from ["']\.{1,2}\/[^"']*\.ts["']|import\(["'][^"']*\.ts["']\)/, `${path} names no .ts file`);
  }

  const app = join(dir, 'app');
  await mkdir(app);
  await writeFile(join(app, 'package.json'), JSON.stringify({ name: 'scratch', private: true, type: 'module' }));
  const tarball = join(dir, packed.filename);
  await succeeds('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', tarball, `@types/node@${TYPES_NODE_VERSION}`], app);

  // tsc --init's setup, with the Node.js settings its own comments advise (lib esnext, types node).
  const { library, worker } = await readmeExamples();
  await writeFile(join(app, 'example.ts'), library);
  await writeFile(join(app, 'worker.ts'), workerProgram(worker));
  await writeFile(join(app, 'remote.ts'), REMOTE_WORKER);
  await succeeds(process.execPath, [TSC, '--init'], app);
  await succeeds(process.execPath, [TSC, '-p', '.', '--lib', 'esnext', '--types', 'node'], app);

  const example = await succeeds(process.execPath, ['example.js'], app);
  assert.match(example, /^succeeded charged 42\nclosed 1 null\n$/);
  const ranWorker = await succeeds(process.execPath, ['worker.js'], app);
  assert.match(ranWorker, /^succeeded charged 7 1\nRunlogError\n$/);

  const help = await succeeds('npx', ['--no', '--', 'runlog', '--help'], app);
  assert.match(help, /^usage: runlog <command>/);
  const bin = join(app, 'node_modules', '.bin', 'runlog');
  const replay = await succeeds(bin, ['replay', '--dir', 'runlog-data'], app);
  assert.match(replay, /1 entries \(0 open\)/);

  // What the Dockerfile runs: the installed bin's server, over plain node, and a Worker in another
  // process through the client (connect); SIGTERM stops the server cleanly.
  const serve = await startServe(t, bin, app);
  const healthz = await fetch(`${serve.url}/healthz`);
  assert.deepEqual([healthz.status, await healthz.json()], [200, { status: 'ok' }]);
  // The web console's page and a module of it, from the installed package's files.
  const page = await fetch(`${serve.url}/console`);
  assert.deepEqual([page.status, page.headers.get('content-type')], [200, 'text/html; charset=utf-8']);
  assert.match(await page.text(), /<title>runlog console<\/title>/);
  const script = await fetch(`${serve.url}/console/main.js`);
  assert.deepEqual([script.status, (await script.text()).includes('showTimeline')], [200, true]);
  const remote = await succeeds(process.execPath, ['remote.js', serve.url], app);
  assert.equal(remote, 'succeeded sent welcome\n');
  serve.child.kill('SIGTERM');
  assert.deepEqual(await once(serve.child, 'exit'), [0, null]);

  await writeFile(join(app, 'tables-aside.mjs'), TABLES_ASIDE_FROM_DIST);
  assert.equal(await succeeds(process.execPath, ['tables-aside.mjs'], app), '3 1 3\n');

  await writeFile(join(app, 'commonjs.cjs'), FROM_COMMONJS);
  assert.equal(await succeeds(process.execPath, ['commonjs.cjs'], app), 'function function\n');
});
