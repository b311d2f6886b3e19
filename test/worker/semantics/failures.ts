/** Worker semantics, failures: retries with the backoff, parking, original input on retry, bad handler values. */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import type { RunlogEvent } from '../../../src/events/types.ts';
import { defaultBackoff } from '../../../src/worker/backoff.ts';
import { allEvents, submitOf } from '../../contract/fixtures.ts';
import { ofType, workerOn, type WorkerBackend } from '../fixtures.ts';

const text = (bytes: Uint8Array | null): string | null => (bytes === null ? null : new TextDecoder().decode(bytes));

export function failureTests(backend: WorkerBackend): void {
  it('a failing handler is retried with the backoff, then parked, with every attempt in the audit trail', async (t) => {
    const fx = await workerOn(backend, t);
    const { worker, time, events, start } = fx.worker();
    worker.handle('build', ({ attempt }) => {
      throw new Error(`boom ${attempt}`);
    });
    start();
    const ticket = await fx.queue.submit(submitOf('acme', 't1', { maxAttempts: 3 }));
    for (const attempt of [1, 2]) {
      const retried = await events.next(ofType('retried', ticket.entryId));
      assert.equal('attempt' in retried && retried.attempt, attempt);
      assert.equal(await fx.queue.nextDueAt(['build']), fx.clock.nowMs + defaultBackoff(attempt));
      time.advance(defaultBackoff(attempt));
      worker.wake();
    }
    const parked = await events.next(ofType('parked', ticket.entryId));
    assert.equal('error' in parked && parked.error, 'Error: boom 3');
    const entry = await fx.queue.entry('acme', ticket.entryId);
    assert.equal(entry.outcome, 'failed');
    assert.equal(entry.error, 'Error: boom 3');
    assert.equal(entry.attempts.length, 3);
    const trail = (await allEvents(fx.local.log)).filter((e) => e.entryId === ticket.entryId);
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
    const fx = await workerOn(backend, t);
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
    const fx = await workerOn(backend, t);
    const { worker, time, events } = fx.worker({ backoff: (attempt) => attempt * 7, maxAttempts: 2 });
    worker.handle('build', () => Promise.reject(new TypeError('nope')));
    const ticket = await fx.queue.submit(submitOf('acme', 't1'));
    assert.equal(await worker.runDue('build'), 1);
    assert.equal(await fx.queue.nextDueAt(['build']), fx.clock.nowMs + 7);
    assert.equal(await worker.runDue('build'), 0, 'a retry waits for its backoff');
    time.advance(7);
    assert.equal(await worker.runDue('build'), 1);
    assert.equal((await fx.queue.entry('acme', ticket.entryId)).outcome, 'failed');
    assert.equal(events.of('parked').length, 1);
  });

  it('an entry whose attempts are used up (a crash after its last attempt started) is parked unrun', async (t) => {
    const fx = await workerOn(backend, t);
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

  it('a handler throwing a non-Error value, returning a huge result or a bad value each ends with a clear error', async (t) => {
    const fx = await workerOn(backend, t, { maxInputBytes: 1024 });
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
}
