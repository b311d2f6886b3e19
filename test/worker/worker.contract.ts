/**
 * The worker semantics suite, run on every log backend from this one source. Time is fake
 * throughout: the store clock is a FakeClock and the worker's timers are manual, so no test
 * sleeps; tests await the worker's events, awaitClosed or waitIdle instead.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isRunlogError } from '../../src/errors.ts';
import type { RunlogEvent } from '../../src/events/types.ts';
import { defaultBackoff } from '../../src/worker/backoff.ts';
import type { HandlerContext } from '../../src/worker/types.ts';
import { allEvents, submitOf } from '../contract/fixtures.ts';
import { deferred, ofType, turns, workerOn, type OpenWorkerLog } from './fixtures.ts';
import { perThreadProperty } from './worker-property.ts';

const text = (bytes: Uint8Array | null): string | null => (bytes === null ? null : new TextDecoder().decode(bytes));

export function workerSemantics(name: string, openLog: OpenWorkerLog): void {
  describe(`Worker semantics on ${name}`, () => {
    it('a failing handler is retried with the backoff, then parked, with every attempt in the audit trail', async (t) => {
      const fx = await workerOn(openLog, t);
      const { worker, time, events, start } = fx.worker();
      worker.handle('build', ({ attempt }) => {
        throw new Error(`boom ${attempt}`);
      });
      start();
      const ticket = await fx.queue.submit(submitOf('acme', 't1', { maxAttempts: 3 }));
      for (const attempt of [1, 2]) {
        const retried = await events.next(ofType('retried', ticket.entryId));
        assert.equal('attempt' in retried && retried.attempt, attempt);
        assert.equal(fx.queue.nextDueAt(['build']), fx.clock.nowMs + defaultBackoff(attempt));
        time.advance(defaultBackoff(attempt));
        worker.wake();
      }
      const parked = await events.next(ofType('parked', ticket.entryId));
      assert.equal('error' in parked && parked.error, 'Error: boom 3');
      const entry = await fx.queue.entry('acme', ticket.entryId);
      assert.equal(entry.outcome, 'failed');
      assert.equal(entry.error, 'Error: boom 3');
      assert.equal(entry.attempts.length, 3);
      const trail = (await allEvents(fx.queue.log)).filter((e) => e.entryId === ticket.entryId);
      assert.deepEqual(
        trail.filter((e) => e.type !== 'Leased').map((e) => e.type),
        ['Submitted', 'AttemptStarted', 'Yielded', 'AttemptStarted', 'Yielded', 'AttemptStarted', 'Closed'],
      );
      const yields = trail.filter((e): e is Extract<RunlogEvent, { type: 'Yielded' }> => e.type === 'Yielded');
      assert.deepEqual(
        yields.map((y) => [y.kind, y.error, y.notBefore! - y.at]),
        [
          ['retry', 'Error: boom 1', defaultBackoff(1)],
          ['retry', 'Error: boom 2', defaultBackoff(2)],
        ],
      );
      const closed = trail.at(-1) as Extract<RunlogEvent, { type: 'Closed' }>;
      assert.equal(closed.outcome, 'failed');
      assert.equal(closed.error, 'Error: boom 3');
      const m = worker.metrics();
      assert.deepEqual([m.failed, m.retried, m.parked, m.processed, m.succeeded], [3, 2, 1, 3, 0]);
    });

    it('a handler that changes its input and fails gets the original bytes on the retry', async (t) => {
      const fx = await workerOn(openLog, t);
      const { worker, time } = fx.worker({ backoff: () => 5 });
      const seen: (string | null)[] = [];
      worker.handle('build', ({ input, entry }) => {
        seen.push(text(input));
        input.fill(0x21);
        entry.metadata.m = 'changed';
        if (seen.length === 1) throw new Error('first attempt fails');
        return 'ok';
      });
      const ticket = await fx.queue.submit(submitOf('acme', 't1', { input: 'pristine', metadata: { m: '1' } }));
      assert.equal(await worker.runDue('build'), 1);
      time.advance(5);
      assert.equal(await worker.runDue('build'), 1);
      assert.deepEqual(seen, ['pristine', 'pristine']);
      const entry = await fx.queue.entry('acme', ticket.entryId);
      assert.deepEqual([entry.outcome, text(entry.input), entry.metadata], ['succeeded', 'pristine', { m: '1' }]);
    });

    it('a custom backoff and a worker maxAttempts cap apply', async (t) => {
      const fx = await workerOn(openLog, t);
      const { worker, time, events } = fx.worker({ backoff: (attempt) => attempt * 7, maxAttempts: 2 });
      worker.handle('build', () => Promise.reject(new TypeError('nope')));
      const ticket = await fx.queue.submit(submitOf('acme', 't1'));
      assert.equal(await worker.runDue('build'), 1);
      assert.equal(fx.queue.nextDueAt(['build']), fx.clock.nowMs + 7);
      assert.equal(await worker.runDue('build'), 0, 'a retry waits for its backoff');
      time.advance(7);
      assert.equal(await worker.runDue('build'), 1);
      assert.equal((await fx.queue.entry('acme', ticket.entryId)).outcome, 'failed');
      assert.equal(events.of('parked').length, 1);
    });

    it('an entry whose attempts are used up (a crash after its last attempt started) is parked unrun', async (t) => {
      const fx = await workerOn(openLog, t);
      const ticket = await fx.queue.submit(submitOf('acme', 't1', { maxAttempts: 1 }));
      const crashed = (await fx.queue.take({ agents: ['build'], holder: 'dead', ttlMs: 1000 }))!;
      await fx.queue.startAttempt(crashed.lease, 'run-of-the-dead');
      fx.clock.advance(1000);
      const { worker } = fx.worker();
      let calls = 0;
      worker.handle('build', () => void calls++);
      assert.equal(await worker.runDue('build'), 1);
      assert.equal(calls, 0);
      const entry = await fx.queue.entry('acme', ticket.entryId);
      assert.equal(entry.outcome, 'failed');
      assert.match(entry.error!, /1 attempts made, at most 1 allowed/);
    });

    it('a handler that outlives its lease without renewal loses it: its signal aborts, another worker runs the entry, its late close leaves no trace', async (t) => {
      const fx = await workerOn(openLog, t);
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
      a.time.timers.advance(5_000); // A's renewal now runs, and is refused
      await aborted;
      assert.ok(isRunlogError(contextA.signal.reason, 'LeaseNotCurrent'), String(contextA.signal.reason));
      late.resolve('late result of A');
      await a.events.next(ofType('lost', ticket.entryId));
      assert.equal(a.worker.metrics().expired, 1);
      release.resolve('result of B');
      assert.equal(await runB, 1);
      const entry = await fx.queue.entry('acme', ticket.entryId);
      assert.equal(entry.outcome, 'succeeded');
      assert.equal(text(entry.result), 'result of B');
      assert.equal(entry.attempts.length, 2);
      const trail = (await allEvents(fx.queue.log)).filter((e) => e.entryId === ticket.entryId);
      assert.equal(trail.filter((e) => e.type === 'Closed').length, 1);
    });

    it('renewal every half lease keeps a long handler its lease', async (t) => {
      const fx = await workerOn(openLog, t);
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
      const fx = await workerOn(openLog, t);
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

    it('stop mid-run hands the leases back (defer); the entries run again at once, no attempt counted as failed', async (t) => {
      const fx = await workerOn(openLog, t);
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
      const yields = (await allEvents(fx.queue.log)).filter((e) => e.type === 'Yielded');
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
      assert.deepEqual([fx.queue.metrics().failed, fx.queue.metrics().retried], [0, 0]);
    });

    it('attempts cut short by stops never park an entry, even with maxAttempts 1', async (t) => {
      const fx = await workerOn(openLog, t);
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

    it('ensureFresh: nothing owed answers undefined; a pending entry runs now in the caller; a failure rejects with its error, then Parked', async (t) => {
      const fx = await workerOn(openLog, t);
      const { worker } = fx.worker();
      const seen: string[] = [];
      worker.handle('build', ({ input }) => {
        const what = text(input)!;
        seen.push(what);
        if (what.startsWith('bad')) throw new RangeError(`cannot ${what}`);
        return `built ${what}`;
      });
      assert.equal(await worker.ensureFresh('acme', 't1', 'build'), undefined);
      await fx.queue.submit(submitOf('acme', 't1', { agent: 'deploy' }));
      assert.equal(await worker.ensureFresh('acme', 't2', 'build'), undefined, "another agent's entry is not owed");
      const later = await fx.queue.submit(submitOf('acme', 't2', { input: 'later', notBefore: fx.clock.nowMs + 60_000 }));
      assert.equal(await worker.ensureFresh('acme', 't2', 'build'), undefined);
      assert.deepEqual(seen, ['later'], 'ran now, without waiting for its notBefore');
      assert.equal(text((await fx.queue.entry('acme', later.entryId)).result), 'built later');
      const bad = await fx.queue.submit(submitOf('acme', 't3', { input: 'bad one', maxAttempts: 2 }));
      await assert.rejects(
        worker.ensureFresh('acme', 't3', 'build'),
        (error: Error) => error instanceof RangeError && error.message === 'cannot bad one',
      );
      await assert.rejects(worker.ensureFresh('acme', 't3', 'build'), { code: 'Parked' });
      assert.equal((await fx.queue.entry('acme', bad.entryId)).outcome, 'failed');
    });

    it('ensureFresh waits for a run in progress elsewhere; Parked if that run parks the entry', async (t) => {
      const fx = await workerOn(openLog, t);
      const a = fx.worker();
      a.worker.handle('build', () => assert.fail('A must not run an entry held elsewhere'));
      const b = fx.worker();
      const gates = [deferred(), deferred()];
      const started = [deferred(), deferred()];
      let call = 0;
      b.worker.handle('build', async () => {
        const i = call++;
        started[i]!.resolve();
        await gates[i]!.promise;
        if (i === 1) throw new Error('broken');
        return 'done';
      });
      await fx.queue.submit(submitOf('acme', 't1'));
      const runB = b.worker.runDue('build');
      await started[0]!.promise;
      let settled = false;
      const fresh = a.worker.ensureFresh('acme', 't1', 'build').finally(() => (settled = true));
      await turns(5);
      assert.equal(settled, false);
      gates[0]!.resolve();
      assert.equal(await fresh, undefined);
      await runB;
      await fx.queue.submit(submitOf('acme', 't1', { maxAttempts: 1 }));
      const runB2 = b.worker.runDue('build');
      await started[1]!.promise;
      const parked = a.worker.ensureFresh('acme', 't1', 'build');
      gates[1]!.resolve();
      await assert.rejects(parked, { code: 'Parked' });
      await runB2;
    });

    it('handleEvery runs on its timer, not as soon as due, and its pending entry survives a restart', async (t) => {
      const fx = await workerOn(openLog, t);
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
      const fx = await workerOn(openLog, t);
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
      const fx = await workerOn(openLog, t);
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

    it('a handler throwing a non-Error value, returning a huge result or a bad value each ends with a clear error', async (t) => {
      const fx = await workerOn(openLog, t, { maxInputBytes: 1024 });
      const { worker } = fx.worker({ maxAttempts: 1 });
      worker.handle('build', ({ input }) => {
        const what = text(input);
        if (what === 'string') throw 'just a string';
        if (what === 'huge') return new Uint8Array(4096);
        if (what === 'object') return { not: 'bytes' } as never;
        return undefined;
      });
      const expectations: [string, RegExp][] = [
        ['string', /non-Error value: "just a string"/],
        ['huge', /result could not be recorded.*4096 bytes, more than the limit of 1024/],
        ['object', /returned \{ not: 'bytes' \}; a result must be a Uint8Array, a string or undefined/],
      ];
      for (const [what, message] of expectations) {
        const ticket = await fx.queue.submit(submitOf('acme', what, { input: what }));
        assert.equal(await worker.runDue('build'), 1);
        const entry = await fx.queue.entry('acme', ticket.entryId);
        assert.equal(entry.outcome, 'failed', what);
        assert.match(entry.error!, message);
      }
    });

    it('a handler that never settles: stopping gives up on it after the grace period; a lost lease too', async (t) => {
      const fx = await workerOn(openLog, t);
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
      fx.clock.advance(10_000); // B stalls past its lease; its renewal is refused
      b.time.timers.advance(5_000);
      await new Promise((resolve) => contextB.signal.addEventListener('abort', resolve));
      b.time.timers.advance(1_000);
      assert.equal(await pass, 1);
      assert.equal(b.events.of('abandoned').length, 1);
      assert.equal((await fx.queue.entry('acme', ticket.entryId)).attempts.length, 2);
    });

    it('two workers never run two entries of one thread at once (fast-check schedules of submissions, failures and stops)', async () => {
      await perThreadProperty(openLog);
    });
  });
}
