/** Worker semantics, stop: leases handed back, cut-short attempts never park, handlers that never settle. */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import type { HandlerContext } from '../../../src/worker/types.ts';
import { allEvents, submitOf } from '../../contract/fixtures.ts';
import { deferred, workerOn, type WorkerBackend } from '../fixtures.ts';

export function stopTests(backend: WorkerBackend): void {
  it('stop mid-run hands the leases back (defer); the entries run again at once, no attempt counted as failed', async (t) => {
    const fx = await workerOn(backend, t);
    const first = fx.worker({ concurrency: 2 });
    let started = 0;
    const bothStarted = deferred();
    first.worker.handle('build', async ({ signal }) => {
      if (++started === 2) bothStarted.resolve();
      await new Promise((resolve) => signal.addEventListener('abort', resolve));
      throw signal.reason;
    });
    const running = first.start();
    const tickets = [await fx.queue.submit(submitOf('acme', 't1')), await fx.queue.submit(submitOf('acme', 't2'))];
    await bothStarted.promise;
    await running.stop();
    for (const ticket of tickets) {
      const entry = await fx.queue.entry('acme', ticket.entryId);
      assert.equal(entry.status, 'open');
      assert.equal(entry.lease, null);
      assert.equal(entry.notBefore, null);
      assert.equal(entry.attempts.length - entry.deferredAttempts, 0, 'the cut-short attempt does not count toward maxAttempts');
    }
    const yields = (await allEvents(fx.local.log)).filter((e) => e.type === 'Yielded');
    assert.deepEqual(
      yields.map((e) => e.type === 'Yielded' && [e.kind, e.error]),
      [
        ['defer', null],
        ['defer', null],
      ],
    );
    assert.deepEqual([first.worker.metrics().failed, first.worker.metrics().deferred], [0, 2]);
    const second = fx.worker();
    second.worker.handle('build', () => 'ok');
    second.start();
    await second.worker.waitIdle();
    for (const ticket of tickets) assert.equal((await fx.queue.entry('acme', ticket.entryId)).outcome, 'succeeded');
    assert.deepEqual([(await fx.queue.metrics()).failed, (await fx.queue.metrics()).retried], [0, 0]);
  });

  it('attempts cut short by stops never park an entry, even with maxAttempts 1', async (t) => {
    const fx = await workerOn(backend, t);
    const ticket = await fx.queue.submit(submitOf('acme', 't1', { maxAttempts: 1 }));
    for (let stop = 0; stop < 3; stop++) {
      const cut = fx.worker();
      const started = deferred();
      cut.worker.handle('build', async ({ signal }) => {
        started.resolve();
        await new Promise((resolve) => signal.addEventListener('abort', resolve));
        throw signal.reason;
      });
      const running = cut.start();
      await started.promise;
      await running.stop();
    }
    const entry = await fx.queue.entry('acme', ticket.entryId);
    assert.deepEqual([entry.status, entry.attempts.length, entry.deferredAttempts], ['open', 3, 3]);
    const last = fx.worker();
    last.worker.handle('build', () => 'done');
    last.start();
    await last.worker.waitIdle();
    assert.equal((await fx.queue.entry('acme', ticket.entryId)).outcome, 'succeeded');
  });

  it('a handler that never settles: stopping gives up on it after the grace period; a lost lease too', async (t) => {
    const fx = await workerOn(backend, t);
    const a = fx.worker({ leaseMs: 10_000, graceMs: 1_000 });
    const started = deferred<HandlerContext>();
    a.worker.handle('build', (context) => {
      started.resolve(context);
      return new Promise(() => {});
    });
    const running = a.start();
    const ticket = await fx.queue.submit(submitOf('acme', 't1'));
    const context = await started.promise;
    const stopping = running.stop();
    assert.ok(context.signal.aborted);
    a.time.timers.advance(1_000);
    await stopping;
    assert.equal(a.events.of('abandoned').length, 1);
    const entry = await fx.queue.entry('acme', ticket.entryId);
    assert.notEqual(entry.lease, null, 'the lease is left to expire, so no one else runs the thread meanwhile');

    const b = fx.worker({ leaseMs: 10_000, graceMs: 1_000 });
    const startedB = deferred<HandlerContext>();
    b.worker.handle('build', (context) => {
      startedB.resolve(context);
      return new Promise(() => {});
    });
    fx.clock.advance(10_000);
    const pass = b.worker.runDue('build');
    const contextB = await startedB.promise;
    fx.clock.advance(10_000); // B stalls past its lease: lost as its renewal comes due
    const aborted = new Promise((resolve) => contextB.signal.addEventListener('abort', resolve));
    b.time.timers.advance(5_000);
    await aborted;
    b.time.timers.advance(1_000);
    assert.equal(await pass, 1);
    assert.equal(b.events.of('abandoned').length, 1);
    assert.equal((await fx.queue.entry('acme', ticket.entryId)).attempts.length, 2);
  });
}
