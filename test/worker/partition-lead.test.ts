/**
 * A Worker on a partition acquired from a node whose clock ran ahead (src/queue/partition-lead.ts):
 * the partition's times (a lease's expiresAt, an attempt's startedAt) run an hour ahead of
 * queue.now(). The worker must not compare the two: its lease keeper judges a lease by the time
 * it asked for it, ensureFresh asks the queue, and run times are measured on one clock. Each case
 * runs with the lead and without it (the control). Found by a hostile tester of session 8.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Worker } from '../../src/worker/worker.ts';
import { submitOf } from '../contract/fixtures.ts';
import { acquiredAhead, HOUR, threadOn } from '../support/acquired-ahead.ts';
import { FakeTime, ManualTimers } from './fixtures.ts';

/** Lets the worker's promises run (real turns) between steps of fake time. */
const aMoment = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 20));

for (const aheadMs of [HOUR, 0]) {
  describe(`a worker on a partition acquired ${aheadMs === 0 ? 'in step (control)' : 'an hour ahead'}`, () => {
    it('notices its lease ran out when it cannot renew it (the partition was released), and aborts the handler', async (t) => {
      const { queue, clock } = await acquiredAhead(t, aheadMs);
      await queue.submit({ ...submitOf('acme', threadOn(0, 1)), agent: 'x' });
      const time = new FakeTime(clock, new ManualTimers());
      const worker = new Worker(queue, { holder: 'w1', timers: time.timers, pollMs: 100, leaseMs: 2_000, logger: () => {} });
      let signal: AbortSignal | undefined;
      let finish!: () => void;
      const gate = new Promise<void>((resolve) => (finish = resolve));
      worker.handle('x', async (context) => {
        signal = context.signal;
        await gate;
        return 'ok';
      });
      const run = worker.runDue('x');
      for (let i = 0; i < 500 && signal === undefined; i++) await aMoment();
      assert.ok(signal !== undefined, 'the handler did not start');
      await queue.release(0); // its extends now fail with NotOwner, not LeaseNotCurrent
      // Up to 20 s of fake time for a 2 s lease: far less than the hour of the lead.
      for (let i = 0; i < 200 && !signal.aborted; i++) {
        time.advance(100);
        await aMoment();
      }
      assert.ok(
        signal.aborted,
        `the handler still believes it holds a lease that ran out ${(clock.nowMs - 1_700_000_000_000) / 1000} s ago`,
      );
      finish();
      await run.catch(() => undefined);
    });

    it("ensureFresh runs an entry once a crashed holder's lease ran out", async (t) => {
      const { queue, clock } = await acquiredAhead(t, aheadMs);
      const thread = threadOn(0, 1);
      const ticket = await queue.submit({ ...submitOf('acme', thread), agent: 'x' });
      const crashed = await queue.take({ agents: ['x'], holder: 'crashed', ttlMs: 2_000 });
      assert.equal(crashed?.entry.entryId, ticket.entryId);
      const time = new FakeTime(clock, new ManualTimers());
      const worker = new Worker(queue, { holder: 'w2', timers: time.timers, pollMs: 100, leaseMs: 2_000, logger: () => {} });
      let ran = false;
      worker.handle('x', () => {
        ran = true;
        return 'ok';
      });
      let done = false;
      const fresh = worker.ensureFresh('acme', thread, 'x').finally(() => (done = true));
      for (let i = 0; i < 200 && !done; i++) {
        time.advance(100);
        await aMoment();
      }
      assert.ok(ran && done, `ensureFresh still waits ${(clock.nowMs - 1_700_000_000_000 - 2_000) / 1000} s after the lease ran out`);
      await fresh;
    });

    it('counts a run of 5 s as 5 s of exec time', async (t) => {
      const { queue, clock } = await acquiredAhead(t, aheadMs);
      await queue.submit({ ...submitOf('acme', threadOn(0, 1)), agent: 'x' });
      const worker = new Worker(queue, { holder: 'w', logger: () => {} });
      worker.handle('x', () => {
        clock.advance(5_000);
        return 'ok';
      });
      assert.equal(await worker.runDue('x'), 1);
      assert.equal(worker.metrics().totalExecMs, 5_000);
    });
  });
}
