/** The command line against a real embedded log: an entry's audit trail and a replay summary. */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { openRunQueue } from '../../src/queue/run-queue.ts';

const CLI = join(import.meta.dirname, '../../src/cli/runlog.ts');

function runlog(...args: string[]): { status: number | null; stdout: string; stderr: string } {
  return spawnSync(process.execPath, ['--import', 'tsx', CLI, ...args], { encoding: 'utf8' });
}

describe('runlog command line', () => {
  it('history prints the audit trail in log order; replay summarises the view; mistakes exit 2 with usage', async (t) => {
    const dir = await mkdtemp(join(tmpdir(), 'runlog-cli-'));
    t.after(() => rm(dir, { recursive: true, force: true }));
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
    const types = history.stdout.trim().split('\n').map((line) => line.split(/\s+/)[2]);
    assert.deepEqual(types, ['Submitted', 'Leased', 'AttemptStarted', 'Yielded', 'Leased', 'AttemptStarted', 'Closed']);
    assert.match(history.stdout, /error="SMTP 451"/);
    assert.match(history.stdout, /outcome=succeeded result="sent"/);

    const foreign = runlog('history', 'globex', ticket.entryId, '--dir', dir);
    assert.match(foreign.stdout, /no events of ticket/);

    const replay = runlog('replay', '--dir', dir);
    assert.equal(replay.status, 0, replay.stderr);
    assert.match(replay.stdout, /2 entries \(1 open\)/);
    assert.match(replay.stdout, /enqueued 2 {2}succeeded 1 {2}failed 0 {2}retried 1/);

    const wrong = runlog('frobnicate');
    assert.equal(wrong.status, 2);
    assert.match(wrong.stderr, /unknown command frobnicate[\s\S]*usage:/);
    const forged = runlog('history', 'acme', 'not-an-id', '--dir', dir);
    assert.equal(forged.status, 2);
    assert.match(forged.stderr, /TicketNotFound/);
  });
});
