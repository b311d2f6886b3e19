/**
 * A worker reports its failures and its own trouble without onEvent: to the `logger`
 * option, stderr by default, at most LOG_LIMIT.records per kind a window, with the count
 * of those suppressed told by the next record of the kind (or at stop).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import { openMemoryLog } from '../../src/log/memory/memory-log.ts';
import { openRunQueueOnLog } from '../../src/queue/open-run-queue.ts';
import { LOG_LIMIT } from '../../src/worker/report.ts';
import type { WorkerLogRecord } from '../../src/worker/types.ts';
import { Worker } from '../../src/worker/worker.ts';
import { FakeClock } from '../contract/fixtures.ts';
import { ManualTimers, turns } from './fixtures.ts';

async function failingWorker(t: { after(fn: () => unknown): void }, maxAttempts: number) {
  const clock = new FakeClock();
  const queue = await openRunQueueOnLog(await openMemoryLog({ partitions: 1 }), { clock: clock.read });
  t.after(() => queue.stop());
  const records: WorkerLogRecord[] = [];
  const timers = new ManualTimers();
  const worker = new Worker(queue, { holder: 'w1', timers, backoff: () => 0, logger: (record) => records.push(record) });
  worker.handle('billing', () => {
    throw new Error('card declined');
  });
  const ticket = await queue.submit({ tenant: 'acme', thread: 't', agent: 'billing', input: 'x', maxAttempts });
  return { clock, queue, records, timers, worker, entryId: ticket.entryId };
}

describe('worker reporting', () => {
  it('by default a failing handler is reported on stderr, retried and parked', () => {
    const child = spawnSync(process.execPath, ['--import', 'tsx', fileURLToPath(new URL('./report-child.ts', import.meta.url))], {
      encoding: 'utf8',
    });
    assert.equal(child.status, 0, child.stderr);
    const entryId = child.stdout.trim();
    const lines = child.stderr.split('\n').filter((line) => line.startsWith('runlog worker '));
    assert.equal(lines.length, 2, child.stderr);
    assert.match(lines[0]!, new RegExp(`warn: attempt 1 of entry ${entryId} \\(agent billing\\) failed, will retry: Error: card declined`));
    assert.match(lines[1]!, new RegExp(`error: entry ${entryId} \\(agent billing\\) is parked after attempt 2: Error: card declined`));
  });

  it('a custom logger gets structured records; a loop of failures is rate-limited per kind and the suppressed are counted', async (t) => {
    const { clock, records, worker, entryId } = await failingWorker(t, 1000);
    const failures = 50;
    for (let i = 0; i < failures; i++) assert.equal(await worker.runDue('billing'), 1);
    assert.equal(records.length, LOG_LIMIT.records, 'at most LOG_LIMIT.records in one window');
    assert.deepEqual(records[0], {
      level: 'warn',
      kind: 'attempt-failed',
      holder: 'w1',
      entryId,
      agent: 'billing',
      attempt: 1,
      error: 'Error: card declined',
      message: `attempt 1 of entry ${entryId} (agent billing) failed, will retry: Error: card declined`,
    });
    assert.deepEqual(
      records.map((record) => record.attempt),
      Array.from({ length: LOG_LIMIT.records }, (_, i) => i + 1),
    );
    clock.advance(LOG_LIMIT.windowMs);
    await worker.runDue('billing');
    const next = records.at(-1)!;
    assert.equal(next.attempt, failures + 1);
    assert.equal(next.suppressed, failures - LOG_LIMIT.records);
    assert.match(next.message, new RegExp(`\\(${failures - LOG_LIMIT.records} more like it were suppressed\\)$`));
  });

  it("the worker's own trouble (a stopped queue it keeps asking) is reported, rate-limited, and what was suppressed is told at stop", async (t) => {
    const { queue, records, timers, worker } = await failingWorker(t, 1);
    await queue.stop();
    const stop = new AbortController();
    const running = worker.run(stop.signal);
    for (let i = 0; i < 40; i++) {
      await turns(3);
      timers.advance(1000);
    }
    stop.abort();
    await running;
    const trouble = records.filter((record) => record.kind === 'worker-error');
    assert.equal(trouble.length, LOG_LIMIT.records + 1, 'LOG_LIMIT.records reported, then the summary at stop');
    assert.equal(trouble[0]!.level, 'error');
    assert.match(trouble[0]!.message, /taking or running an entry failed: RunlogError Stopped: the run queue was stopped/);
    const summary = trouble.at(-1)!;
    assert.ok(summary.suppressed! > 0, 'some were suppressed');
    assert.match(summary.message, new RegExp(`^${summary.suppressed} more worker-error records were suppressed$`));
  });

  it('a logger that throws does not break the worker', async (t) => {
    const clock = new FakeClock();
    const queue = await openRunQueueOnLog(await openMemoryLog({ partitions: 1 }), { clock: clock.read });
    t.after(() => queue.stop());
    const worker = new Worker(queue, {
      timers: new ManualTimers(),
      backoff: () => 0,
      logger: () => {
        throw new Error('logger down');
      },
    });
    worker.handle('billing', () => {
      throw new Error('card declined');
    });
    const { entryId } = await queue.submit({ tenant: 'acme', thread: 't', agent: 'billing', input: 'x', maxAttempts: 1 });
    assert.equal(await worker.runDue('billing'), 1);
    assert.equal((await queue.entry('acme', entryId)).outcome, 'failed');
  });

  it('a backoff option that throws or answers NaN is reported, and the retry comes at once', async (t) => {
    for (const backoff of [
      () => {
        throw new Error('no backoff');
      },
      () => Number.NaN,
    ]) {
      const clock = new FakeClock();
      const queue = await openRunQueueOnLog(await openMemoryLog({ partitions: 1 }), { clock: clock.read });
      t.after(() => queue.stop());
      const records: WorkerLogRecord[] = [];
      const worker = new Worker(queue, { timers: new ManualTimers(), backoff, logger: (record) => records.push(record) });
      worker.handle('billing', () => {
        throw new Error('card declined');
      });
      const { entryId } = await queue.submit({ tenant: 'acme', thread: 't', agent: 'billing', input: 'x', maxAttempts: 3 });
      assert.equal(await worker.runDue('billing'), 1);
      const entry = await queue.entry('acme', entryId);
      assert.equal(entry.status, 'open');
      assert.equal(entry.attempts.length, 1);
      assert.ok(entry.notBefore === null || entry.notBefore <= queue.now(), 'takeable again at once');
      const trouble = records.find((record) => record.kind === 'worker-error');
      assert.match(
        trouble?.message ?? '',
        /^backoff failed: RunlogError InvalidArgument: backoff\(1\) (threw Error: no backoff|answered NaN, not a whole number)/,
      );
    }
  });
});
