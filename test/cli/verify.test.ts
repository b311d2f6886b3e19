/**
 * runlog verify against a real `runlog serve` (a child process, the log's writer): the
 * scenario written through the HTTP client, the replay of the live log equals the server's
 * entries; a copy of the log that went on differently (a cancel the server never saw)
 * differs for that entry alone (exit 1); records that break the log's rules (an attempt
 * after the entry closed, a record under another event's key) are each named by offset,
 * and verify changes no byte of the log.
 */
import assert from 'node:assert/strict';
import { cp } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { connect } from '../../src/client/index.ts';
import { encodeEvent } from '../../src/events/codec.ts';
import { openLog } from '../../src/log/open-log.ts';
import { openRunQueue } from '../../src/queue/open-run-queue.ts';
import { filesUnder } from '../log/file-damage.ts';
import { spawnServe } from '../server/serve-child.ts';
import { onCleanup, scratchDir } from '../support/cleanup.ts';
import { writeScenario } from './audit-scenario.ts';
import { historyEvents } from './audit-checks.ts';
import { runCli } from './run-cli.ts';
import { openAuthenticator } from '../../src/server/auth.ts';
import { startServer } from '../../src/server/start-server.ts';
import { quietLogger } from '../client/fixtures.ts';

describe('runlog verify', () => {
  it('the replay of a live file log equals the running server; a log that went on differently does not', async (t) => {
    const root = await scratchDir(t, 'runlog-verify-');
    const dir = join(root, 'data');
    const { url } = await spawnServe(t, ['--dir', dir, '--partitions', '2', '--port', '0', '--host', '127.0.0.1']).started();
    const client = await connect({ url });
    onCleanup(t, () => client.stop());
    const scenario = await writeScenario(client);

    const run = await runCli(['verify', '--dir', dir, '--url', url]);
    assert.equal(run.code, 0, run.stdout + run.stderr);
    assert.match(run.stdout, /^partition 0: \d+ records, \d+ entries replayed: whole$/m);
    assert.match(run.stdout, new RegExp(`^compared 4 entries with the server at ${url}: all equal$`, 'm'));
    assert.match(run.stdout, /^verified: no problem found$/m);
    const json = JSON.parse((await runCli(['verify', '--dir', dir, '--url', url, '--json'])).stdout) as {
      ok: boolean;
      live: { compared: number };
    };
    assert.deepEqual([json.ok, json.live.compared], [true, 4]);

    // A copy of the log (the server's lock is not copied) goes on by itself: the leased entry is cancelled there only.
    // The server still runs: a temp file it is writing (reached marks, snapshots: `*.tmp`, renamed into place) may be
    // gone by the time cp reaches it, so none is copied (a copy of the log never needs one).
    const copy = join(root, 'copy');
    await cp(dir, copy, { recursive: true, filter: (source) => !source.endsWith('.tmp') });
    const other = await openRunQueue({ log: { kind: 'file', dir: copy } });
    await other.cancel('globex', scenario.leased, 'only in the copy');
    await other.stop();
    const differs = await runCli(['verify', '--dir', copy, '--url', url, '--json']);
    assert.equal(differs.code, 1, differs.stderr);
    const report = JSON.parse(differs.stdout) as {
      ok: boolean;
      live: { mismatches: { entryId: string; replayed: { status: string }; live: { status: string } }[] };
    };
    assert.equal(report.ok, false);
    assert.deepEqual(
      report.live.mismatches.map((m) => [m.entryId, m.replayed.status, m.live.status]),
      [[scenario.leased, 'closed', 'open']],
    );
  });

  it('--url with a token of some tenants: says the token may not cover the tenant, not that the log is damaged', async (t) => {
    const dir = await scratchDir(t, 'runlog-verify-scoped-');
    const queue = await openRunQueue({ log: { kind: 'file', dir }, partitions: 2 });
    onCleanup(t, () => queue.stop());
    const token = 'acme-only-0123456789abcdef';
    const authenticator = openAuthenticator([{ name: 'acme-reader', token, tenants: ['acme'], roles: ['producer'] }]);
    const server = await startServer({
      queue,
      log: queue.log,
      authenticator,
      logger: quietLogger,
      host: '127.0.0.1',
      port: 0,
      maxInputBytes: queue.maxInputBytes,
    });
    onCleanup(t, () => server.close());
    await queue.submit({ tenant: 'acme', thread: 'a', agent: 'build', input: 'x' });
    const other = await queue.submit({ tenant: 'globex', thread: 'g', agent: 'build', input: 'y' });
    const run = await runCli(['verify', '--dir', dir, '--url', server.url, '--token', token]);
    assert.equal(run.code, 1, run.stdout + run.stderr);
    assert.ok(
      run.stderr.includes(
        `ticket "${other.entryId}" of tenant "globex", which the log holds, was never issued: the token given may not cover tenant "globex"`,
      ),
      run.stderr,
    );
  });

  it('names each record that breaks the rules by its offset; changes nothing', async (t) => {
    const dir = await scratchDir(t, 'runlog-verify-');
    const queue = await openRunQueue({ log: { kind: 'file', dir }, partitions: 2 });
    const scenario = await writeScenario(queue);
    await queue.stop();
    assert.equal((await runCli(['verify', '--dir', dir])).code, 0);
    const events = await historyEvents(['--dir', dir], scenario.failed);
    const closed = events.at(-1)!;
    const log = await openLog({ kind: 'file', dir });
    const base = { tenant: 'acme', thread: 'order-1', entryId: scenario.failed, at: closed.at + 1 };
    await log.append(closed.partition, [
      { key: `e/${scenario.failed}/a/3`, value: encodeEvent({ type: 'AttemptStarted', ...base, runId: 'late', attempt: 3, epoch: 9 }) },
      { key: 'p/pruned', value: encodeEvent({ type: 'CancelRequested', ...base, reason: null, deferredAttempts: 0 }) },
    ]);
    const end = await log.endOffset(closed.partition);
    await log.close();
    const before = await filesUnder(dir);
    const run = await runCli(['verify', '--dir', dir]);
    assert.equal(run.code, 1, run.stderr);
    assert.match(run.stdout, new RegExp(`^  @${end - 2n}: AttemptStarted of entry ${scenario.failed} after it closed$`, 'm'));
    assert.match(run.stdout, new RegExp(`^  @${end - 1n}: CancelRequested under key "p/pruned", not "e/${scenario.failed}/m"$`, 'm'));
    assert.match(run.stdout, /^NOT verified: see above$/m);
    assert.deepEqual(await filesUnder(dir), before);
  });
});
