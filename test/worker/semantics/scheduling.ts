/** Worker semantics, scheduling: handleEvery, runDue passes, waitIdle, and one run per thread at a time. */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { submitOf } from '../../contract/fixtures.ts';
import { ofType, turns, workerOn, type WorkerBackend } from '../fixtures.ts';
import { perThreadProperty } from '../worker-property.ts';

const text = (bytes: Uint8Array | null): string | null => (bytes === null ? null : new TextDecoder().decode(bytes));

export function schedulingTests(backend: WorkerBackend): void {
  it('handleEvery runs on its timer, not as soon as due, and its pending entry survives a restart', async (t) => {
    const fx = await workerOn(backend, t);
    const first = fx.worker();
    let firstRuns = 0;
    first.worker.handleEvery('sweep', 60_000, () => void firstRuns++);
    const running = first.start();
    const created = await first.events.next(ofType('enqueued'));
    await turns(5);
    assert.equal(firstRuns, 0, 'the pool does not take periodic entries');
    first.time.advance(60_000);
    await first.events.next(ofType('succeeded', 'entryId' in created ? created.entryId : ''));
    const successor = await first.events.next(ofType('enqueued'));
    assert.equal(firstRuns, 1);
    await running.stop();
    const queue = await fx.reopen();
    const open = await queue.openEntries('runlog', 'every/sweep');
    assert.deepEqual(
      open.map((e) => e.entryId),
      ['entryId' in successor ? successor.entryId : ''],
    );
    const second = fx.worker();
    let secondRuns = 0;
    second.worker.handleEvery('sweep', 60_000, () => void secondRuns++);
    second.start();
    second.time.advance(60_000);
    await second.events.next(ofType('succeeded', open[0]!.entryId));
    await second.events.next(ofType('enqueued'));
    assert.equal(secondRuns, 1);
    assert.equal(second.events.of('enqueued').length, 1, 'only the successor of the run; none on start');
    assert.equal((await queue.openEntries('runlog', 'every/sweep')).length, 1);
  });

  it('runDue runs every due entry of an agent once per pass and answers how many', async (t) => {
    const fx = await workerOn(backend, t);
    const { worker } = fx.worker({ backoff: () => 0 });
    worker.handle('build', ({ input }) => {
      if (text(input) === 'flaky') throw new Error('flaky');
    });
    for (const thread of ['a', 'b', 'c']) await fx.queue.submit(submitOf('acme', thread));
    await fx.queue.submit(submitOf('acme', 'd', { input: 'flaky' }));
    await fx.queue.submit(submitOf('acme', 'a'));
    await fx.queue.submit(submitOf('acme', 'e', { agent: 'deploy' }));
    assert.equal(await worker.runDue('build'), 5, 'four heads, then the second entry of thread a; the flaky one once');
    assert.equal(await worker.runDue('build'), 1, 'the flaky one again, in the next pass');
  });

  it('waitIdle resolves once nothing of the pool agents is pending or leased; parked and periodic entries do not count', async (t) => {
    const fx = await workerOn(backend, t);
    const { worker, start } = fx.worker({ concurrency: 3 });
    const done: string[] = [];
    worker.handle('build', async ({ input }) => {
      await turns(1);
      if (text(input) === 'doomed') throw new Error('doomed');
      done.push(text(input)!);
    });
    worker.handleEvery('sweep', 60_000, () => undefined);
    start();
    for (let i = 0; i < 6; i++) await fx.queue.submit(submitOf('acme', `t${i % 3}`, { input: `job ${i}` }));
    await fx.queue.submit(submitOf('acme', 'x', { input: 'doomed', maxAttempts: 1 }));
    await worker.waitIdle();
    assert.equal(done.length, 6);
    for (const thread of ['t0', 't1', 't2']) assert.deepEqual(await fx.queue.openEntries('acme', thread), []);
    assert.deepEqual(
      done.filter((d) => d === 'job 0' || d === 'job 3'),
      ['job 0', 'job 3'],
      'thread order kept',
    );
  });

  it("a worker with tenants runs only their entries: the pool, runDue and waitIdle leave other tenants' work alone", async (t) => {
    const fx = await workerOn(backend, t);
    const { worker, start } = fx.worker({ tenants: ['globex', 'initech'], concurrency: 2 });
    const ran: string[] = [];
    worker.handle('build', ({ entry }) => void ran.push(`${entry.tenant}/${entry.thread}`));
    // acme's work sorts first (higher priority), and one of its entries is due later: neither is this worker's.
    const acme = await fx.queue.submit(submitOf('acme', 'a', { priority: 9 }));
    await fx.queue.submit(submitOf('acme', 'later', { notBefore: fx.clock.nowMs + 60_000 }));
    await fx.queue.submit(submitOf('globex', 'g'));
    assert.equal(await worker.runDue('build'), 1, 'runDue runs the one globex entry');
    await fx.queue.submit(submitOf('initech', 'i'));
    await fx.queue.submit(submitOf('globex', 'g'));
    start();
    await worker.waitIdle();
    assert.deepEqual(ran.sort(), ['globex/g', 'globex/g', 'initech/i']);
    const untouched = await fx.queue.entry('acme', acme.entryId);
    assert.deepEqual([untouched.status, untouched.lease, untouched.attempts.length], ['open', null, 0]);
    assert.equal((await fx.queue.openEntries('acme', 'later')).length, 1);
  });

  it('two workers never run two entries of one thread at once (fast-check schedules of submissions, failures and stops)', async () => {
    await perThreadProperty(backend);
  });
}
