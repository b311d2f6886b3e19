/**
 * `new Worker(await connect(...))` in another process: a child process (node --import tsx)
 * runs a Worker connected to this test's server (with tokens: the worker's own) and runs the
 * entries a producer submits here to completion; SIGTERM stops it cleanly, holding no lease.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { connect } from '../../src/client/index.ts';
import { openMemoryLog } from '../../src/log/memory/memory-log.ts';
import { openRunQueueOnLog } from '../../src/queue/open-run-queue.ts';
import { openAuthenticator } from '../../src/server/auth.ts';
import { onCleanup } from '../support/cleanup.ts';
import { serve } from './fixtures.ts';

const CHILD = fileURLToPath(new URL('./worker-child.ts', import.meta.url));
const TOKENS = [
  { name: 'producer', token: 'producer-token-0123456789', tenants: ['acme'], roles: ['producer' as const] },
  { name: 'worker', token: 'worker-token-0123456789ab', tenants: ['acme'], roles: ['worker' as const] },
];

it('a Worker in a child process, connected over HTTP, runs the entries to completion and stops on SIGTERM', async (t) => {
  const local = await openRunQueueOnLog(await openMemoryLog({ partitions: 4 }));
  onCleanup(t, () => local.stop());
  const server = await serve(local, { authenticator: openAuthenticator(TOKENS) });
  onCleanup(t, () => server.close());
  const producer = await connect({ url: server.url, token: TOKENS[0]!.token });
  onCleanup(t, () => producer.stop());

  const child = spawn(process.execPath, ['--import', 'tsx', CHILD, server.url], {
    env: { ...process.env, RUNLOG_TOKEN: TOKENS[1]!.token },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
  onCleanup(t, async () => {
    if (child.exitCode === null) child.kill('SIGKILL');
    await exited;
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (data: Buffer) => (stdout += data.toString()));
  child.stderr.on('data', (data: Buffer) => (stderr += data.toString()));

  const tickets = [];
  for (let i = 0; i < 20; i++)
    tickets.push(await producer.submit({ tenant: 'acme', thread: `t${i % 5}`, agent: 'build', input: `job ${i}` }));
  const closed = await Promise.all(tickets.map((ticket) => producer.awaitClosed('acme', ticket.entryId)));
  for (const [i, entry] of closed.entries()) {
    assert.equal(entry!.outcome, 'succeeded', stderr);
    assert.equal(new TextDecoder().decode(entry!.result!), `built job ${i} in ${child.pid}`);
  }
  assert.match(stdout, /^ready\n/);

  child.kill('SIGTERM');
  const [code, signal] = await exited;
  assert.deepEqual([code, signal], [0, null], stderr);
  assert.match(stdout, /stopped \{.*"succeeded":20/);
  for (let i = 0; i < 5; i++) assert.deepEqual(await local.openEntries('acme', `t${i}`), []);
  assert.equal((await local.metrics()).succeeded, 20);
});
