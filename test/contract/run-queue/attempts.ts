/** RunQueue contract, attempts: startAttempt and run ids, retry and defer yields, deferred attempts. */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { assertReplayEqualsLive, eventsOf, queueOn, refused, submitOf, type Backend } from '../fixtures.ts';

const TTL = 30_000;

export function attemptsTests(backend: Backend): void {
  it('startAttempt records the attempt; a run id names at most one run on its thread (RunIdReused)', async (t) => {
    const { queue, log } = await queueOn(backend, t);
    await queue.submit(submitOf('acme', 't1'));
    await queue.submit(submitOf('acme', 't1'));
    const taken = (await queue.take({ agents: ['build'], holder: 'w', ttlMs: TTL }))!;
    const events = await eventsOf(log, () => queue.startAttempt(taken.lease, 'run-1'));
    assert.deepEqual(
      events.map((e) => e.type),
      ['AttemptStarted'],
    );
    await refused(log, 'RunIdReused', () => queue.startAttempt(taken.lease, 'run-1'));
    assert.equal(await queue.yield(taken.lease, { kind: 'retry', error: 'boom' }), true);
    const next = (await queue.take({ agents: ['build'], holder: 'w', ttlMs: TTL }))!;
    assert.equal(next.lease.entryId, taken.lease.entryId);
    const attempt = await queue.startAttempt(next.lease, 'run-2');
    assert.equal(attempt.attempt, 2);
    await queue.close(next.lease, { status: 'succeeded' });
    const other = (await queue.take({ agents: ['build'], holder: 'w', ttlMs: TTL }))!;
    await refused(log, 'RunIdReused', () => queue.startAttempt(other.lease, 'run-1'));
  });

  it('a retry yield delays the entry by delayMs on the store clock; a defer yield makes it takeable at once', async (t) => {
    const { queue, clock } = await queueOn(backend, t);
    await queue.submit(submitOf('acme', 't1'));
    const taken = (await queue.take({ agents: ['build'], holder: 'w', ttlMs: TTL }))!;
    await queue.yield(taken.lease, { kind: 'retry', error: 'boom', delayMs: 1000 });
    assert.equal(await queue.nextDueAt(['build']), clock.nowMs + 1000);
    clock.advance(999);
    assert.equal(await queue.take({ agents: ['build'], holder: 'w', ttlMs: TTL }), null);
    clock.advance(1);
    const again = (await queue.take({ agents: ['build'], holder: 'w', ttlMs: TTL }))!;
    await queue.yield(again.lease, { kind: 'defer' });
    assert.ok(await queue.take({ agents: ['build'], holder: 'w', ttlMs: TTL }));
  });

  it('an attempt handed back unfinished (defer after startAttempt) is counted as deferred, a retry is not', async (t) => {
    const { queue, local } = await queueOn(backend, t);
    const ticket = await queue.submit(submitOf('acme', 't1'));
    const take = async () => (await queue.take({ agents: ['build'], holder: 'w', ttlMs: TTL }))!.lease;
    let lease = await take();
    await queue.yield(lease, { kind: 'defer' });
    assert.equal((await queue.entry('acme', ticket.entryId)).deferredAttempts, 0, 'nothing had started');
    lease = await take();
    await queue.startAttempt(lease, 'r1');
    await queue.yield(lease, { kind: 'defer' });
    lease = await take();
    await queue.startAttempt(lease, 'r2');
    await queue.yield(lease, { kind: 'retry', error: 'boom' });
    const entry = await queue.entry('acme', ticket.entryId);
    assert.equal(entry.attempts.length, 2);
    assert.equal(entry.deferredAttempts, 1);
    await assertReplayEqualsLive(local);
  });
}
