/**
 * submit, get, cancel and list against a real server (startServer on a free loopback port,
 * over a real queue), through the client: answers, refusals (exit 1), malformed arguments
 * (exit 2, nothing written), the environment's RUNLOG_URL and RUNLOG_TOKEN, and the
 * `runlog` process itself.
 */
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { openAuthenticator } from '../../src/server/auth.ts';
import { logSize } from '../contract/fixtures.ts';
import { scratchDir } from '../support/cleanup.ts';
import { serverOn } from '../server/fixtures.ts';
import { spawnServe } from '../server/serve-child.ts';
import { openSse } from '../server/sse-reader.ts';
import { runCli, runlogChild } from './run-cli.ts';

const MAX_INPUT = 1024;

describe('runlog submit, get, cancel, list', () => {
  it('submits (text, file, stdin), reads, lists and cancels; --json answers parse', async (t) => {
    const { server } = await serverOn(t, { partitions: 2 });
    const at = ['--url', server.url];
    const where = ['--tenant', 'acme', '--thread', 'order-1', '--agent', 'mail'];

    const first = await runCli([
      'submit',
      ...where,
      '--input',
      'send receipt',
      '--key',
      'k1',
      '--metadata',
      'shop=eu',
      '--priority',
      '3',
      ...at,
    ]);
    assert.equal(first.code, 0, first.stderr);
    const entryId = first.stdout.trim();
    assert.match(entryId, /^\d+-\S+$/);

    const dir = await scratchDir(t, 'runlog-cli-submit-');
    const file = join(dir, 'input.bin');
    await writeFile(file, Buffer.from([0, 1, 2, 255]));
    const fromFile = await runCli(['submit', ...where, '--input-file', file, '--not-before', '+1h', '--json', ...at]);
    assert.equal(fromFile.code, 0, fromFile.stderr);
    const ticket = JSON.parse(fromFile.stdout) as { entryId: string; created: boolean; tenant: string };
    assert.deepEqual([ticket.tenant, ticket.created], ['acme', true]);
    const fromStdin = await runCli(['submit', ...where, '--input-file', '-', '--json', ...at], { stdin: 'from stdin' });
    assert.equal(fromStdin.code, 0, fromStdin.stderr);

    const again = await runCli([
      'submit',
      ...where,
      '--input',
      'send receipt',
      '--key',
      'k1',
      '--metadata',
      'shop=eu',
      '--priority',
      '3',
      ...at,
    ]);
    assert.equal(again.stdout.trim(), `${entryId} (already submitted with this key)`);

    const got = await runCli(['get', 'acme', entryId, '--json', ...at]);
    assert.equal(got.code, 0, got.stderr);
    const entry = JSON.parse(got.stdout) as { input: string; metadata: Record<string, string>; priority: number; status: string };
    assert.equal(Buffer.from(entry.input, 'base64').toString(), 'send receipt');
    assert.deepEqual([entry.metadata, entry.priority, entry.status], [{ shop: 'eu' }, 3, 'open']);
    const binary = JSON.parse((await runCli(['get', 'acme', ticket.entryId, '--json', ...at])).stdout) as {
      input: string;
      notBefore: number;
    };
    assert.deepEqual([...Buffer.from(binary.input, 'base64')], [0, 1, 2, 255]);
    assert.equal(typeof binary.notBefore, 'number');
    const human = await runCli(['get', 'acme', entryId, ...at]);
    assert.match(human.stdout, /^entry +\S+$/m);
    assert.match(human.stdout, /^submitted +\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} \+00:00$/m);
    assert.match(human.stdout, /^input +"send receipt"$/m);

    const listed = await runCli(['list', 'acme', 'order-1', '--json', ...at]);
    const { entries } = JSON.parse(listed.stdout) as { entries: { entryId: string }[] };
    assert.equal(entries.length, 3);
    assert.equal(entries[0]!.entryId, entryId);
    assert.equal((await runCli(['list', 'acme', 'order-1', ...at])).stdout.trim().split('\n').length, 3);
    assert.match((await runCli(['list', 'acme', 'nothing-here', ...at])).stdout, /no open entries in thread nothing-here/);

    const cancelled = await runCli(['cancel', 'acme', entryId, '--reason', 'changed my mind', '--json', ...at]);
    assert.equal(cancelled.code, 0, cancelled.stderr);
    assert.deepEqual([JSON.parse(cancelled.stdout).status, JSON.parse(cancelled.stdout).outcome], ['closed', 'cancelled']);
    assert.equal(JSON.parse((await runCli(['list', 'acme', 'order-1', '--json', ...at])).stdout).entries.length, 2);
  });

  it('refusals exit 1 with the code on stderr', async (t) => {
    const { server, log } = await serverOn(t, { partitions: 2 });
    const at = ['--url', server.url];
    const submitted = await runCli(['submit', '--tenant', 'acme', '--thread', 't', '--agent', 'a', '--input', 'x', ...at]);
    const entryId = submitted.stdout.trim();
    await runCli(['cancel', 'acme', entryId, ...at]);
    const before = await logSize(log);
    const cases: [args: string[], says: RegExp][] = [
      [['get', 'acme', 'not-a-ticket'], /^runlog: TicketNotFound: /],
      [['get', 'globex', entryId], /^runlog: TicketExpired: .*is not tenant "globex"'s/],
      [['cancel', 'acme', entryId], /^runlog: EntryClosed: /],
      [['cancel', 'acme', 'not-a-ticket'], /^runlog: TicketNotFound: /],
    ];
    for (const [args, says] of cases) {
      const run = await runCli([...args, ...at]);
      assert.equal(run.code, 1, `${args.join(' ')}: ${run.stderr}`);
      assert.match(run.stderr, says, args.join(' '));
      assert.equal(run.stdout, '');
    }
    assert.equal(await logSize(log), before);
    await runCli(['submit', '--tenant', 'acme', '--thread', 'busy', '--agent', 'a', '--input', 'x', ...at]);
    const busy = await runCli([
      'submit',
      '--tenant',
      'acme',
      '--thread',
      'busy',
      '--agent',
      'a',
      '--input',
      'y',
      '--strategy',
      'reject',
      ...at,
    ]);
    assert.equal(busy.code, 1);
    assert.match(busy.stderr, /^runlog: ThreadBusy: /);

    await server.close();
    const gone = await runCli(['get', 'acme', entryId, '--retry-ms', '0', ...at]);
    assert.equal(gone.code, 1);
    assert.match(gone.stderr, /^runlog: LogUnavailable: no answer from the runlog server/);
  });

  it('--token or RUNLOG_TOKEN, --url or RUNLOG_URL; a wrong token exits 1 Unauthorized', async (t) => {
    const token = 'producer-acme-0123456789';
    const { server } = await serverOn(t, {
      partitions: 1,
      authenticator: openAuthenticator([{ name: 'producer-acme', token, tenants: ['acme'], roles: ['producer'] }]),
    });
    const args = ['submit', '--tenant', 'acme', '--thread', 't', '--agent', 'a', '--input', 'x'];
    const byFlags = await runCli([...args, '--url', server.url, '--token', token]);
    assert.equal(byFlags.code, 0, byFlags.stderr);
    const byEnv = await runCli(args, { env: { RUNLOG_URL: server.url, RUNLOG_TOKEN: token } });
    assert.equal(byEnv.code, 0, byEnv.stderr);
    const flagsWin = await runCli([...args, '--url', server.url, '--token', token], {
      env: { RUNLOG_URL: 'http://127.0.0.1:1', RUNLOG_TOKEN: 'wrong-token-0123456789' },
    });
    assert.equal(flagsWin.code, 0, flagsWin.stderr);
    const says = [/none was given: pass --token TOKEN or set RUNLOG_TOKEN/, /the one given \(--token or RUNLOG_TOKEN\) was refused/];
    for (const [i, wrong] of [[], ['--token', 'not-the-token-0123456']].entries()) {
      const run = await runCli([...args, '--url', server.url, ...wrong]);
      assert.equal(run.code, 1, run.stderr);
      assert.match(run.stderr, /^runlog: Unauthorized: /);
      assert.match(run.stderr, says[i]!, 'it says how the command line gives a token');
      assert.ok(!run.stderr.includes('not-the-token'), 'never the token itself');
    }
    const other = await runCli([
      'submit',
      '--tenant',
      'globex',
      '--thread',
      't',
      '--agent',
      'a',
      '--input',
      'x',
      '--url',
      server.url,
      '--token',
      token,
    ]);
    assert.equal(other.code, 1);
    assert.match(other.stderr, /^runlog: Forbidden: /);
  });

  it('malformed arguments: exit 2 naming the flag or value, nothing written', async (t) => {
    const { server, log } = await serverOn(t, { partitions: 2, maxInputBytes: MAX_INPUT });
    const submit = ['submit', '--tenant', 'acme', '--thread', 't', '--agent', 'a'];
    const cases: [args: string[], says: RegExp][] = [
      [[...submit], /submit needs an input: --input TEXT, or --input-file PATH/],
      [['submit', '--thread', 't', '--agent', 'a', '--input', 'x'], /submit needs --tenant/],
      [['submit', '--tenant', 'acme', '--agent', 'a', '--input', 'x'], /submit needs --thread/],
      [['submit', '--tenant', 'acme', '--thread', 't', '--input', 'x'], /submit needs --agent/],
      [[...submit, '--input', 'x', '--input-file', '-'], /give the input once/],
      [[...submit, '--input-file', '/nonexistent/input'], /--input-file "\/nonexistent\/input" cannot be read: ENOENT/],
      [[...submit, '--input', 'x', '--tenant', ''], /--tenant must not be empty/],
      [[...submit, '--input', 'x', '--priority', 'high'], /--priority must be an integer in -2147483648..2147483647, got "high"/],
      [[...submit, '--input', 'x', '--max-attempts', '0'], /--max-attempts must be an integer >= 1, got "0"/],
      [
        [...submit, '--input', 'x', '--not-before', 'tomorrow'],
        /--not-before must be epoch ms, an ISO date-time with its zone .*got "tomorrow"/,
      ],
      [[...submit, '--input', 'x', '--deadline', '2026-12-01T06:00:00'], /--deadline must be .*got "2026-12-01T06:00:00"/],
      [[...submit, '--input', 'x', '--deadline', '+5 minutes'], /--deadline must be .*got "\+5 minutes"/],
      [[...submit, '--input', 'x', '--metadata', 'novalue'], /--metadata must be KEY=VALUE, got "novalue"/],
      [[...submit, '--input', 'x', '--metadata', 'a=1', '--metadata', 'a=2'], /--metadata names "a" twice/],
      [[...submit, '--input', 'x', '--strategy', 'replace'], /--strategy must be enqueue or reject, got "replace"/],
      [[...submit, '--input', 'x', '--retry-ms', 'soon'], /--retry-ms must be an integer in 0..600000, got "soon"/],
      [[...submit, '--input', 'x', '--url', 'ftp://example.com'], /InvalidArgument: url must be an http: or https: url/],
      [[...submit, '--input', 'x'.repeat(MAX_INPUT + 1)], /InvalidArgument: .*input/],
      [[...submit, '--input', 'x', 'extra'], /unexpected argument "extra"/],
      [[...submit, '--input', 'x', '--tennant', 'acme'], /Unknown option '--tennant'/],
      [['get', 'acme'], /get needs <tenant> <entryId>/],
      [['get', 'acme', 'id', 'more'], /unexpected argument "more"/],
      [['get', 'acme', 'id', '--reason', 'x'], /Unknown option '--reason'/],
      [['cancel', 'acme'], /cancel needs <tenant> <entryId>/],
      [['cancel', 'acme', 'id', '--reason'], /Option '--reason' argument is ambiguous/], // --url follows
      [['cancel', 'acme', 'id', '--reason', ''], /--reason must not be empty/],
      [['list'], /list needs <tenant> <thread>/],
      [['list', 'acme', 't', '--json=1'], /--json.*does not take an argument/],
      [['list', 'acme', 't', '--url', ''], /--url must not be empty/],
    ];
    const before = await logSize(log);
    for (const [args, says] of cases) {
      const run = await runCli(args.includes('--url') ? args : [...args, '--url', server.url]);
      const call = `runlog ${args.join(' ').slice(0, 120)}`;
      assert.equal(run.code, 2, `${call}: ${run.stderr}`);
      assert.match(run.stderr, says, call);
      assert.equal(run.stdout, '', call);
    }
    assert.equal(await logSize(log), before);
  });

  it('against a real runlog serve child: the CLI submits over HTTP; history reads its live log; /v1/events streams it', async (t) => {
    const dir = await scratchDir(t, 'runlog-cli-serve-');
    const serve = spawnServe(t, ['--port', '0', '--dir', dir]);
    const { url } = await serve.started();
    const env = { ...process.env, RUNLOG_URL: url };
    const submitted = await runlogChild(['submit', '--tenant', 'acme', '--thread', 't', '--agent', 'a', '--input', 'over http', '--json'], {
      env,
    });
    assert.equal(submitted.code, 0, submitted.stderr);
    const { entryId } = JSON.parse(submitted.stdout) as { entryId: string };
    const history = await runlogChild(['history', 'acme', entryId, '--dir', dir, '--json']);
    assert.equal(history.code, 0, history.stderr);
    assert.deepEqual(
      history.stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line).type),
      ['Submitted'],
    );
    const stream = await openSse(`${url}/v1/events?from=0&tenant=acme`);
    t.after(() => stream.close());
    const first = JSON.parse((await stream.next())!.data) as { type: string; entryId: string };
    assert.deepEqual([first.type, first.entryId], ['Submitted', entryId]);
    stream.close();
    serve.child.kill('SIGTERM');
    assert.equal((await serve.exited).code, 0);
  });

  it('the runlog process: RUNLOG_URL from the environment, stdin as the input, exit status', async (t) => {
    const { server } = await serverOn(t, { partitions: 1 });
    const env = { ...process.env, RUNLOG_URL: server.url };
    const submitted = await runlogChild(['submit', '--tenant', 'acme', '--thread', 't', '--agent', 'a', '--input-file', '-', '--json'], {
      env,
      stdin: 'piped in',
    });
    assert.equal(submitted.code, 0, submitted.stderr);
    const { entryId } = JSON.parse(submitted.stdout) as { entryId: string };
    const got = await runlogChild(['get', 'acme', entryId, '--json'], { env });
    assert.equal(got.code, 0, got.stderr);
    assert.equal(Buffer.from(JSON.parse(got.stdout).input, 'base64').toString(), 'piped in');
    const refused = await runlogChild(['cancel', 'acme', 'not-a-ticket'], { env });
    assert.equal(refused.code, 1);
    const usage = await runlogChild(['list', 'acme'], { env });
    assert.equal(usage.code, 2);
  });
});
