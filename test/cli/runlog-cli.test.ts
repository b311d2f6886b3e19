/**
 * The command line against a real embedded log: an entry's audit trail and a replay summary.
 * The `runlog` process itself (src/cli/runlog.ts: its exit status for success, a refusal and a
 * usage error, its stdout and stderr; tail following a live writer) is spawned; the other calls
 * run the same dispatcher and command table in this process (run-cli.ts runCli), against the same
 * files: a spawned `runlog` costs ~2 s of CPU, and the command's reading is what they show.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { appendFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { describe, it } from 'node:test';
import { openFileLog } from '../../src/log/file/file-log.ts';
import { openRunQueue, openRunQueueOnLog } from '../../src/queue/open-run-queue.ts';
import { FakeClock } from '../contract/fixtures.ts';
import { filesUnder, segmentPaths } from '../log/file-damage.ts';
import { onCleanup, scratchDir } from '../support/cleanup.ts';
import { runCli } from './run-cli.ts';

const CLI = join(import.meta.dirname, '../../src/cli/runlog.ts');
const LIVE_WRITER = join(import.meta.dirname, 'live-writer.ts');

/** `runlog ...args` as a process of its own. */
function runlog(...args: string[]): { status: number | null; stdout: string; stderr: string } {
  return spawnSync(process.execPath, ['--import', 'tsx', CLI, ...args], { encoding: 'utf8' });
}

/** `runlog ...args` in this process (the same dispatcher and commands), answered as `runlog` answers. */
async function inProcess(...args: string[]): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const { code, stdout, stderr } = await runCli(args);
  return { status: code, stdout, stderr };
}

describe('runlog command line', () => {
  it('a ticket pruned and compacted away: history says so (exit 0), state --entry is TicketExpired then, and before that the log cannot tell', async (t) => {
    const clock = new FakeClock();
    const dir = await scratchDir(t, 'runlog-cli-pruned-');
    const queue = await openRunQueueOnLog(await openFileLog({ dir }), { clock: clock.read, snapshots: false });
    clock.advance(1_000);
    const pruned = await queue.submit({ tenant: 'acme', thread: 'order-1', agent: 'mail', input: 'send receipt' });
    const taken = (await queue.take({ agents: ['mail'], holder: 'w1', ttlMs: 60_000 }))!;
    await queue.close(taken.lease, { status: 'succeeded' });
    await queue.submit({ tenant: 'acme', thread: 'order-2', agent: 'mail', input: 'still open' });
    clock.advance(10_000);
    assert.equal(await queue.prune(0, 100), 1);
    await queue.log.compact(0);
    await queue.stop();

    const history = await runCli(['history', pruned.entryId, '--dir', dir]);
    assert.equal(history.code, 0, history.stderr);
    assert.match(history.stdout, /^no events of ticket .* \(pruned and compacted away, or another tenant's\)/);
    const now = await runCli(['state', '--dir', dir, '--at', String(clock.read()), '--entry', pruned.entryId]);
    assert.equal(now.code, 1);
    assert.match(now.stderr, /TicketExpired: ticket .* was pruned \(.* or since\) and its records compacted away/);
    // Before its submission, and also before its pruning: the log no longer tells which (it said "not submitted yet" of both).
    for (const at of ['500', '5000']) {
      const before = await runCli(['state', '--dir', dir, '--at', at, '--entry', pruned.entryId]);
      assert.equal(before.code, 1);
      assert.match(
        before.stderr,
        /TicketNotFound: the log holds no record of ticket .* up to .*: it was submitted later, or pruned since and its records compacted away/,
      );
    }
  });

  it('state --at shows a lease run out by then as expired, not as held (the entry waits for a take)', async (t) => {
    const clock = new FakeClock();
    const dir = await scratchDir(t, 'runlog-cli-expired-lease-');
    const queue = await openRunQueueOnLog(await openFileLog({ dir }), { clock: clock.read, snapshots: false });
    const ticket = await queue.submit({ tenant: 'acme', thread: 'one', agent: 'mail', input: 'x' });
    await queue.take({ agents: ['mail'], holder: 'slow', ttlMs: 1_000 });
    const leasedAt = clock.read();
    await queue.stop();
    const during = await runCli(['state', '--dir', dir, '--at', String(leasedAt + 500), '--entry', ticket.entryId]);
    assert.match(during.stdout, /^status +open, leased$/m);
    assert.match(during.stdout, /^lease +slow, epoch 1, until /m);
    const after = await runCli(['state', '--dir', dir, '--at', String(leasedAt + 5_000), '--entry', ticket.entryId]);
    assert.match(after.stdout, /^status +open, its lease expired$/m);
    assert.match(after.stdout, /^lease +slow, epoch 1, expired /m);
    const queueThen = await runCli(['state', '--dir', dir, '--at', String(leasedAt + 5_000)]);
    assert.match(queueThen.stdout, /waiting \(the lease of slow expired\)/);
  });

  it('find lists entries submitted in one millisecond in the order they were submitted', async (t) => {
    const clock = new FakeClock();
    const dir = await scratchDir(t, 'runlog-cli-same-ms-');
    const queue = await openRunQueueOnLog(await openFileLog({ dir }), { clock: clock.read, snapshots: false });
    const tickets: string[] = [];
    for (let i = 0; i < 20; i++)
      tickets.push((await queue.submit({ tenant: 'acme', thread: 'one', agent: 'mail', input: `${i}` })).entryId);
    await queue.stop();
    const all = await runCli(['find', '--dir', dir, '--json']);
    assert.deepEqual(
      all.stdout
        .trim()
        .split('\n')
        .map((line) => (JSON.parse(line) as { entryId: string }).entryId),
      tickets,
    );
    const first = await runCli(['find', '--dir', dir, '--limit', '1', '--json']);
    assert.equal((JSON.parse(first.stdout) as { entryId: string }).entryId, tickets[0], 'the earliest submitted');
  });

  it('history prints the audit trail in log order; replay summarises the view; mistakes exit 2 with usage', async (t) => {
    const dir = await scratchDir(t, 'runlog-cli-');
    const queue = await openRunQueue({ log: { kind: 'file', dir } });
    const ticket = await queue.submit({ tenant: 'acme', thread: 'order-1', agent: 'mail', input: 'send receipt' });
    const first = (await queue.take({ agents: ['mail'], holder: 'w1', ttlMs: 60_000 }))!;
    await queue.startAttempt(first.lease, 'run-1');
    await queue.yield(first.lease, { kind: 'retry', error: 'SMTP 451' });
    const second = (await queue.take({ agents: ['mail'], holder: 'w2', ttlMs: 60_000 }))!;
    await queue.startAttempt(second.lease, 'run-2');
    await queue.close(second.lease, { status: 'succeeded', result: 'sent' });
    await queue.submit({ tenant: 'acme', thread: 'order-2', agent: 'mail', input: 'later' });
    await queue.stop();

    const history = runlog('history', 'acme', ticket.entryId, '--dir', dir);
    assert.equal(history.status, 0, history.stderr);
    const types = history.stdout
      .split('\n')
      .filter((line) => /^\d{4}-/.test(line))
      .map((line) => /^\S+ \S+ \+00:00 {2}@\d+ +\+.*? {2}(\w+)/.exec(line)?.[1]);
    assert.deepEqual(types, ['Submitted', 'Leased', 'AttemptStarted', 'Yielded', 'Leased', 'AttemptStarted', 'Closed']);
    assert.match(history.stdout, /error="SMTP 451"/);
    assert.match(history.stdout, /outcome=succeeded result="sent"/);
    assert.match(history.stdout, /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} \+00:00 {2}@1 +\+0 ms {2}Submitted/m);
    assert.match(history.stdout, /^why +closed succeeded after 2 attempts, /m);

    const foreign = await inProcess('history', 'globex', ticket.entryId, '--dir', dir);
    assert.match(foreign.stdout, /no events of ticket/);

    const replay = await inProcess('replay', '--dir', dir);
    assert.equal(replay.status, 0, replay.stderr);
    assert.match(replay.stdout, /2 entries \(1 open\)/);
    assert.match(replay.stdout, /enqueued 2 {2}succeeded 1 {2}failed 0 {2}retried 1/);

    const wrong = runlog('frobnicate');
    assert.equal(wrong.status, 2);
    assert.match(wrong.stderr, /unknown command "frobnicate"[\s\S]*usage:/);
    const forged = runlog('history', 'acme', 'not-an-id', '--dir', dir);
    assert.equal(forged.status, 1, 'a refusal, not a usage error');
    assert.match(forged.stderr, /TicketNotFound/);
  });

  it('on a log that does not exist: an error exit, and nothing is created', async (t) => {
    const dir = await scratchDir(t, 'runlog-cli-');
    const typo = join(dir, 'dta');
    for (const args of [
      ['replay', '--dir', typo],
      ['history', 'acme', '0-1', '--dir', typo],
      ['tail', '--dir', typo, '--limit', '1'],
      ['export', '--dir', typo],
      ['find', '--dir', typo],
      ['state', '--dir', typo, '--at', '0'],
      ['verify', '--dir', typo],
      ['replay', '--dir', dir],
      ['export', '--dir', dir],
    ]) {
      const run = await inProcess(...args);
      assert.equal(run.status, 2, run.stdout);
      assert.match(run.stderr, /InvalidArgument: .* holds no runlog file log/);
    }
    const spawned = runlog('replay', '--dir', typo); // the process's exit status and stderr
    assert.equal(spawned.status, 2, spawned.stdout);
    assert.match(spawned.stderr, /InvalidArgument: .* holds no runlog file log/);
    await assert.rejects(stat(typo), { code: 'ENOENT' });
    assert.deepEqual([...(await filesUnder(dir)).keys()], []);
  });

  it('reads a log that a live writer in another process holds; the writer goes on unaffected', async (t) => {
    const dir = await scratchDir(t, 'runlog-cli-');
    const writer = spawn(process.execPath, ['--import', 'tsx', LIVE_WRITER, dir], { stdio: ['pipe', 'pipe', 'inherit'] });
    onCleanup(t, () => writer.kill());
    const lines = createInterface({ input: writer.stdout })[Symbol.asyncIterator]();
    const next = async (): Promise<string> => (await lines.next()).value as string;
    const [ready, count, lastTicket] = (await next()).split(' ');
    assert.deepEqual([ready, count], ['ready', '5']);

    const replay = await inProcess('replay', '--dir', dir);
    assert.equal(replay.status, 0, replay.stderr);
    assert.match(replay.stdout, /5 entries \(5 open\)/);
    const history = await inProcess('history', 'acme', lastTicket!, '--dir', dir);
    assert.equal(history.status, 0, history.stderr);
    assert.match(history.stdout, /Submitted .*input="job 4"/);

    const exported = await inProcess('export', '--dir', dir);
    assert.equal(exported.status, 0, exported.stderr);
    assert.equal(exported.stdout.trim().split('\n').length, 6, 'the ticket key and five submissions');

    // tail follows the writer's appends: six records first, then the one "more" makes.
    const tail = spawn(process.execPath, ['--import', 'tsx', CLI, 'tail', '--dir', dir, '--from', 'start', '--limit', '7', '--json'], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    onCleanup(t, () => tail.kill());
    const tailed = createInterface({ input: tail.stdout })[Symbol.asyncIterator]();
    const seen: { type: string; input?: string }[] = [];
    for (let i = 0; i < 6; i++) seen.push(JSON.parse((await tailed.next()).value as string));
    writer.stdin.write('more\n');
    assert.equal(await next(), 'submitted 6');
    seen.push(JSON.parse((await tailed.next()).value as string));
    assert.deepEqual(await once(tail, 'exit'), [0, null]);
    assert.deepEqual(
      seen.filter((event) => event.type === 'Submitted').map((event) => Buffer.from(event.input!, 'base64').toString()),
      ['job 0', 'job 1', 'job 2', 'job 3', 'job 4', 'job 5'],
    );
    assert.match((await inProcess('replay', '--dir', dir)).stdout, /6 entries \(6 open\)/);
    writer.stdin.end('stop\n');
    assert.equal(await next(), 'stopped');
    assert.deepEqual(await once(writer, 'exit'), [0, null]);
  });

  it('on a log with a torn tail: reports it, reads what precedes it, and leaves the bytes as they are', async (t) => {
    const dir = await scratchDir(t, 'runlog-cli-');
    const queue = await openRunQueue({ log: { kind: 'file', dir } });
    const ticket = await queue.submit({ tenant: 'acme', thread: 'order-1', agent: 'mail', input: 'send receipt' });
    await queue.stop();
    await appendFile((await segmentPaths(join(dir, 'partition-0'))).at(-1)!, Buffer.from('a torn frame'));
    const before = await filesUnder(dir);
    for (const args of [
      ['replay', '--dir', dir],
      ['history', 'acme', ticket.entryId, '--dir', dir],
      ['export', '--dir', dir],
      ['tail', '--dir', dir, '--from', 'start', '--limit', '2'],
    ]) {
      const run = await inProcess(...args);
      assert.equal(run.status, 0, run.stderr);
      assert.match(run.stderr, /warning RUNLOG_TORN_TAIL: .*torn tail of 12 bytes.*not done: opened read-only/);
    }
    const exported = (await inProcess('export', '--dir', dir, '--json')).stdout.trim().split('\n');
    assert.deepEqual(
      exported.map((line) => JSON.parse(line).type),
      ['TicketKeyCreated', 'Submitted'],
    );
    assert.match((await inProcess('replay', '--dir', dir)).stdout, /1 entries \(1 open\)/);
    assert.deepEqual(await filesUnder(dir), before);
  });
});
