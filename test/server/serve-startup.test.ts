/**
 * A real `runlog serve` child process starting, or refusing to: without tokens it listens on
 * loopback only whatever host was asked (connecting to this machine's non-loopback address
 * is refused) and logs a warning naming the host asked for; a startup it cannot make is one
 * line on stderr and exit code 1 (refused: the log locked by another serve, the port taken)
 * or 2 (usage: an unknown flag, a bad value, a bad tokens file); the queue's warnings on open
 * are logged (queue.warning); --help prints the usage.
 */
import assert from 'node:assert/strict';
import { appendFile, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { networkInterfaces } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { openRunQueue } from '../../src/queue/open-run-queue.ts';
import { segmentPaths } from '../log/file-damage.ts';
import { scratchDir } from '../support/cleanup.ts';
import { spawnServe } from './serve-child.ts';

/** An IPv4 address of this machine that is not loopback, if it has one. */
function nonLoopbackIPv4(): string | undefined {
  return Object.values(networkInterfaces())
    .flat()
    .find((address) => address !== undefined && address.family === 'IPv4' && !address.internal)?.address;
}

/** Resolves 'connected' or the connection error's code. */
function tryConnect(host: string, port: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    socket.once('connect', () => {
      socket.destroy();
      resolve('connected');
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? String(error)));
  });
}

describe('runlog serve: startup', () => {
  const address = nonLoopbackIPv4();
  it(
    'without tokens, listens on loopback only whatever host was asked, and says so',
    { skip: address === undefined && 'this machine has no non-loopback IPv4 address' },
    async (t) => {
      const dir = await scratchDir(t, 'runlog-serve-loopback-');
      const serve = spawnServe(t, ['--dir', join(dir, 'data'), '--port', '0'], { RUNLOG_HOST: '0.0.0.0' });
      const { url, port } = await serve.started();
      assert.equal(url, `http://127.0.0.1:${port}`);
      const warning = serve.records.find((record) => record.event === 'serve.loopback-only');
      assert.deepEqual([warning?.level, warning?.hostAsked, warning?.host], ['warn', '0.0.0.0', '127.0.0.1']);
      assert.match(String(warning?.message), /no tokens configured: .* loopback only \(127\.0\.0\.1\), not on 0\.0\.0\.0 as asked/);

      const now = await fetch(`${url}/v1/now`);
      assert.equal(now.status, 200, 'loopback, without a token, is served');
      assert.equal(await tryConnect(address!, port), 'ECONNREFUSED', `${address} is refused`);
      // The same address reaches a server that does listen on 0.0.0.0 (with tokens): the refusal above is the loopback rule.
      await writeFile(
        join(dir, 'tokens.json'),
        JSON.stringify([{ name: 'a', token: 'a-token-0123456789', tenants: '*', roles: ['admin'] }]),
      );
      const open = spawnServe(t, ['--dir', join(dir, 'other'), '--port', '0', '--host', '0.0.0.0', '--tokens', join(dir, 'tokens.json')]);
      const reachable = await open.started();
      assert.equal(await tryConnect(address!, reachable.port), 'connected');
    },
  );

  it('refuses to start with one line on stderr: 1 when refused, 2 for usage', async (t) => {
    const dir = await scratchDir(t, 'runlog-serve-refused-');
    const data = join(dir, 'data');
    const first = spawnServe(t, ['--dir', data, '--port', '0', '--host', '127.0.0.1']);
    const { port } = await first.started();
    await writeFile(join(dir, 'bad-tokens.json'), '[{"name":"x","token":"short"}]');
    // [what, arguments, environment, exit code, the line]
    const rows: [string, string[], Record<string, string>, number, RegExp][] = [
      ['the log is locked by another serve', ['--dir', data, '--port', '0'], {}, 1, /^runlog serve: Locked: /],
      [
        'the port is taken',
        ['--dir', join(dir, 'other'), '--port', String(port), '--host', '127.0.0.1'],
        {},
        1,
        /^runlog serve: .*EADDRINUSE/,
      ],
      ['an unknown flag', ['--prot', '1'], {}, 2, /^runlog serve: Unknown option '--prot' \(runlog serve --help\)$/],
      ['a positional argument', ['now'], {}, 2, /^runlog serve: Unexpected argument 'now'/],
      [
        'a bad port',
        ['--dir', data],
        { RUNLOG_PORT: 'http' },
        2,
        /^runlog serve: InvalidArgument: RUNLOG_PORT must be an integer from 0 to 65535, got "http"$/,
      ],
      [
        'a bad tokens file',
        ['--dir', data, '--tokens', join(dir, 'bad-tokens.json')],
        {},
        2,
        /^runlog serve: InvalidArgument: tokens file .*bad-tokens\.json \(--tokens\)\[0\] \(name "x"\): token must be at least 16 characters$/,
      ],
      [
        'a group without Kafka',
        ['--dir', join(dir, 'g'), '--group', 'nodes'],
        {},
        2,
        /^runlog serve: InvalidArgument: --group "nodes" makes this serve a cluster node, and a cluster shares a Kafka topic: give brokers/,
      ],
      [
        'a bad advertise URL',
        ['--brokers', '127.0.0.1:1', '--group', 'nodes'],
        { RUNLOG_ADVERTISE_URL: 'node-1:7070' },
        2,
        /^runlog serve: InvalidArgument: RUNLOG_ADVERTISE_URL must be an http or https URL of scheme, host and port only .* got "node-1:7070"$/,
      ],
      [
        'too many partitions for the file log',
        ['--dir', join(dir, 'p'), '--partitions', '1000'],
        {},
        2,
        /^runlog serve: InvalidArgument: .*partitions/,
      ],
    ];
    for (const [what, args, env, code, line] of rows) {
      await t.test(what, async (t) => {
        const refused = spawnServe(t, args, env);
        assert.deepEqual(await refused.exited, { code, signal: null });
        const lines = refused.stderr().split('\n').filter(Boolean);
        assert.equal(lines.length, 1, refused.stderr());
        assert.match(lines[0]!, line);
        assert.ok(!refused.records.some((record) => record.event === 'serve.listening'));
      });
    }
    assert.equal((await fetch(`http://127.0.0.1:${port}/v1/now`)).status, 200, 'the first serve still serves');
  });

  it("logs the queue's warnings: a torn tail cut when the log opens", async (t) => {
    const dir = await scratchDir(t, 'runlog-serve-warning-');
    const data = join(dir, 'data');
    const queue = await openRunQueue({ log: { kind: 'file', dir: data } });
    await queue.submit({ tenant: 'acme', thread: 'order-1', agent: 'mail', input: 'send receipt' });
    await queue.stop();
    await appendFile((await segmentPaths(join(data, 'partition-0'))).at(-1)!, Buffer.from('a torn frame'));
    const serve = spawnServe(t, ['--dir', data, '--port', '0', '--host', '127.0.0.1']);
    await serve.started();
    const warning = serve.records.find((record) => record.event === 'queue.warning');
    assert.deepEqual([warning?.level, warning?.code], ['warn', 'RUNLOG_TORN_TAIL']);
    assert.match(String(warning?.message), /torn tail of 12 bytes/);
  });

  it('prints its usage for --help', async (t) => {
    const help = spawnServe(t, ['--help']);
    assert.deepEqual(await help.exited, { code: 0, signal: null });
    assert.equal(help.records.length, 0);
    assert.equal(help.text[0], 'usage: runlog serve [flags]');
    assert.ok(help.text.some((line) => /--tokens FILE +RUNLOG_TOKENS_FILE/.test(line)));
    assert.equal(help.stderr(), '');
  });
});
