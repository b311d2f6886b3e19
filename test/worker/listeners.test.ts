/**
 * A worker's callbacks may be async functions: onEvent, logger and backoff that reject must
 * not become unhandled rejections (which end the process), nor stop the worker's runs.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { openMemoryLog } from '../../src/log/memory/memory-log.ts';
import { openRunQueueOnLog } from '../../src/queue/open-run-queue.ts';
import { Worker } from '../../src/worker/worker.ts';
import { FakeClock } from '../contract/fixtures.ts';
import { escapes } from '../queue/bad-argument-rows.ts';
import { ManualTimers } from './fixtures.ts';

describe('async worker callbacks', () => {
  it('onEvent, logger and backoff that reject are contained; the attempts are recorded', async (t) => {
    const escaped = escapes(t);
    const queue = await openRunQueueOnLog(await openMemoryLog({ partitions: 1 }), { clock: new FakeClock().read });
    t.after(() => queue.stop());
    const called = { onEvent: 0, logger: 0, backoff: 0 };
    const worker = new Worker(queue, {
      timers: new ManualTimers(),
      onEvent: async () => {
        called.onEvent++;
        throw new Error('onEvent boom');
      },
      logger: async () => {
        called.logger++;
        throw new Error('logger boom');
      },
      backoff: (async () => {
        called.backoff++;
        throw new Error('backoff boom');
      }) as unknown as (attempt: number) => number,
    });
    worker.handle('billing', () => {
      throw new Error('card declined');
    });
    const { entryId } = await queue.submit({ tenant: 'acme', thread: 't', agent: 'billing', input: 'x', maxAttempts: 2 });
    // The async backoff answers no number: reported, and the retry is due at once.
    assert.equal(await worker.runDue('billing'), 1);
    assert.equal(await worker.runDue('billing'), 1);
    for (let turn = 0; turn < 50 && escaped.length === 0; turn++) await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(escaped, []);
    const entry = await queue.entry('acme', entryId);
    assert.equal(entry.outcome, 'failed');
    assert.equal(entry.error, 'Error: card declined');
    assert.deepEqual(called, { onEvent: 3, logger: 3, backoff: 1 }); // events: error (backoff), retried, parked
  });
});
