/** Worker semantics, leases: renewal, a lease lost to the clock or to a cancel aborts the handler. */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { isRunlogError } from '../../../src/errors.ts';
import type { HandlerContext } from '../../../src/worker/types.ts';
import { allEvents, submitOf } from '../../contract/fixtures.ts';
import { deferred, ofType, workerOn, type WorkerBackend } from '../fixtures.ts';

const text = (bytes: Uint8Array | null): string | null => (bytes === null ? null : new TextDecoder().decode(bytes));

export function leaseTests(backend: WorkerBackend): void {
  it('a handler that outlives its lease without renewal loses it: its signal aborts, another worker runs the entry, its late close leaves no trace', async (t) => {
    const fx = await workerOn(backend, t);
    const a = fx.worker({ leaseMs: 10_000, holder: 'worker-a' });
    const late = deferred<string>();
    const startedA = deferred<HandlerContext>();
    a.worker.handle('build', (context) => {
      startedA.resolve(context);
      return late.promise;
    });
    a.start();
    const ticket = await fx.queue.submit(submitOf('acme', 't1'));
    const contextA = await startedA.promise;
    fx.clock.advance(10_000); // worker A stalls: its renewal timer has not fired
    const b = fx.worker({ leaseMs: 10_000, holder: 'worker-b' });
    const release = deferred<string>();
    const startedB = deferred();
    b.worker.handle('build', () => {
      startedB.resolve();
      return release.promise;
    });
    const runB = b.worker.runDue('build');
    await startedB.promise;
    const aborted = new Promise((resolve) => contextA.signal.addEventListener('abort', resolve));
    a.time.timers.advance(5_000); // A's renewal is now due, after its lease ran out by the store clock
    assert.equal(contextA.signal.aborted, true, 'told at once: no extend is sent for a lease that ran out');
    await aborted;
    assert.ok(isRunlogError(contextA.signal.reason, 'LeaseNotCurrent'), String(contextA.signal.reason));
    late.resolve('late result of A');
    await a.events.next(ofType('lost', ticket.entryId));
    assert.equal(a.worker.metrics().leasesLost, 1);
    release.resolve('result of B');
    assert.equal(await runB, 1);
    const entry = await fx.queue.entry('acme', ticket.entryId);
    assert.equal(entry.outcome, 'succeeded');
    assert.equal(text(entry.result), 'result of B');
    assert.equal(entry.attempts.length, 2);
    const trail = (await allEvents(fx.local.log)).filter((e) => e.entryId === ticket.entryId);
    assert.equal(trail.filter((e) => e.type === 'Closed').length, 1);
  });

  it('renewal every half lease keeps a long handler its lease', async (t) => {
    const fx = await workerOn(backend, t);
    const a = fx.worker({ leaseMs: 10_000 });
    const release = deferred<string>();
    const started = deferred();
    a.worker.handle('build', () => {
      started.resolve();
      return release.promise;
    });
    a.start();
    const ticket = await fx.queue.submit(submitOf('acme', 't1'));
    await started.promise;
    for (let i = 1; i <= 3; i++) {
      a.time.advance(5_000);
      const renewed = await a.events.next(ofType('renewed', ticket.entryId));
      assert.equal('expiresAt' in renewed && renewed.expiresAt, fx.clock.nowMs + 10_000);
    }
    const b = fx.worker();
    b.worker.handle('build', () => assert.fail('B must not get a held entry'));
    assert.equal(await b.worker.runDue('build'), 0);
    release.resolve('done');
    await a.events.next(ofType('succeeded', ticket.entryId));
    const entry = await fx.queue.entry('acme', ticket.entryId);
    assert.equal(entry.attempts.length, 1);
    assert.equal(text(entry.result), 'done');
  });

  it('cancelling a running entry aborts its handler; the late result is refused and counted', async (t) => {
    const fx = await workerOn(backend, t);
    const a = fx.worker();
    const started = deferred<HandlerContext>();
    a.worker.handle('build', async (context) => {
      started.resolve(context);
      await new Promise((resolve) => context.signal.addEventListener('abort', resolve));
      return 'too late';
    });
    a.start();
    const ticket = await fx.queue.submit(submitOf('acme', 't1'));
    const context = await started.promise;
    await fx.queue.cancel('acme', ticket.entryId, 'not needed');
    await a.events.next(ofType('lost', ticket.entryId));
    assert.ok(isRunlogError(context.signal.reason, 'EntryClosed'));
    const entry = await fx.queue.entry('acme', ticket.entryId);
    assert.equal(entry.outcome, 'cancelled');
    assert.equal(entry.result, null);
  });
}
