/**
 * A failed command is that command's alone: after an append fails, the partition is rebuilt
 * from the log, and the next command waits for the rebuild and succeeds. While the rebuild
 * keeps failing, commands fail with a retriable LogUnavailable that says why the rebuild
 * fails, never with the failed command's error. Faults by wrapping a real log.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isRunlogError } from '../../src/errors.ts';
import { openMemoryLog } from '../../src/log/memory/memory-log.ts';
import { openRunQueueOnLog } from '../../src/queue/open-run-queue.ts';
import { assertReplayEqualsLive, FakeClock, submitOf } from '../contract/fixtures.ts';
import type { RunlogWarning } from '../../src/warnings.ts';
import { FaultyLog } from './faulty-log.ts';

async function faultyQueue(t: { after: (fn: () => Promise<void>) => void }) {
  const faulty = new FaultyLog(await openMemoryLog({ partitions: 1 }));
  const warnings: RunlogWarning[] = [];
  const queue = await openRunQueueOnLog(faulty.wrap(), { clock: new FakeClock().read, onWarning: (w) => void warnings.push(w) });
  t.after(() => queue.stop());
  return { faulty, queue, warnings };
}

describe('a failed command poisons nothing after it', () => {
  it('the next command on the partition waits for the rebuild and succeeds', async (t) => {
    const { faulty, queue } = await faultyQueue(t);
    const kept = await queue.submit(submitOf('acme', 't1'));
    faulty.failNextAppend = true;
    await assert.rejects(queue.submit(submitOf('acme', 't2')), /injected append failure/);
    // Right after the refusal, on the same partition: no error of the failed command.
    const next = await queue.submit(submitOf('acme', 't3'));
    assert.equal(next.created, true);
    assert.equal((await queue.entry('acme', next.entryId)).status, 'open');
    assert.equal((await queue.openEntries('acme', 't2')).length, 0, 'the failed submission left no trace');
    assert.equal((await queue.entry('acme', kept.entryId)).status, 'open');
    const taken = await queue.take({ agents: ['build'], holder: 'w', ttlMs: 1000 });
    assert.equal(taken?.entry.entryId, kept.entryId);
    await assertReplayEqualsLive(queue);
  });

  it('every kind of command after a failure waits for the rebuild', async (t) => {
    const { faulty, queue } = await faultyQueue(t);
    const first = await queue.submit(submitOf('acme', 't1'));
    const taken = (await queue.take({ agents: ['build'], holder: 'w', ttlMs: 60_000 }))!;
    faulty.failNextAppend = true;
    await assert.rejects(queue.extend(taken.lease, 1000), /injected append failure/);
    const lease = await queue.extend(taken.lease, 30_000);
    await queue.startAttempt(lease, 'run-1');
    faulty.failNextAppend = true;
    await assert.rejects(queue.close(lease, { status: 'succeeded' }), /injected append failure/);
    const closed = await queue.close(lease, { status: 'succeeded', result: 'done' });
    assert.equal(closed.outcome, 'succeeded');
    assert.equal((await queue.entry('acme', first.entryId)).status, 'closed');
    await assertReplayEqualsLive(queue);
  });

  it('while the rebuild keeps failing, commands fail with a retriable LogUnavailable saying why, then succeed once the log heals', async (t) => {
    const { faulty, queue, warnings } = await faultyQueue(t);
    const kept = await queue.submit(submitOf('acme', 't1'));
    faulty.unreadable = true;
    faulty.failNextAppend = true;
    await assert.rejects(queue.submit(submitOf('acme', 't2')), /injected append failure/);
    for (let i = 0; i < 2; i++) {
      await assert.rejects(queue.submit(submitOf('acme', 't3')), (error: unknown) => {
        assert.ok(isRunlogError(error, 'LogUnavailable') && error.retriable, `a retriable LogUnavailable, got ${String(error)}`);
        assert.match(error.message, /injected read failure/, 'it says why the rebuild fails');
        assert.doesNotMatch(error.message, /injected append failure/, "not the failed command's error");
        return true;
      });
    }
    // Each failed attempt is a warning, and health() says why it does not serve.
    const reported = warnings.filter((w) => w.code === 'RUNLOG_PARTITION_DOWN');
    assert.ok(reported.length >= 2, `a warning per failed attempt, got ${reported.length}`);
    assert.ok(reported.every((w) => /partition 0[\s\S]*injected read failure/.test(w.message)));
    const [rebuilding] = await queue.health();
    assert.equal(rebuilding!.mode, 'rebuilding');
    assert.ok(isRunlogError(rebuilding!.error, 'LogUnavailable') && /injected read failure/.test(rebuilding!.error.message));
    faulty.unreadable = false;
    const next = await queue.submit(submitOf('acme', 't3'));
    assert.equal((await queue.entry('acme', next.entryId)).status, 'open');
    assert.equal((await queue.entry('acme', kept.entryId)).status, 'open');
    assert.deepEqual(await queue.health(), [{ partition: 0, mode: 'serving' }]);
    await assertReplayEqualsLive(queue);
  });
});
