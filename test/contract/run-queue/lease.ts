/** RunQueue contract, leases: expiry by the store clock, and what a stale lease is answered. */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { eventsOf, queueOn, refused, submitOf, type Backend } from '../fixtures.ts';

const TTL = 30_000;

export function leaseTests(backend: Backend): void {
  it('an expired lease is takeable again by the store clock; the stale lease is then refused, and ignored on yield', async (t) => {
    const { queue, log, clock } = await queueOn(backend, t);
    await queue.submit(submitOf('acme', 't1'));
    const first = (await queue.take({ agents: ['build'], holder: 'w1', ttlMs: TTL }))!;
    assert.equal(first.lease.epoch, 1);
    clock.advance(TTL - 1);
    assert.equal(await queue.take({ agents: ['build'], holder: 'w2', ttlMs: TTL }), null);
    clock.advance(1);
    await refused(log, 'LeaseNotCurrent', () => queue.extend(first.lease, TTL));
    const second = (await queue.take({ agents: ['build'], holder: 'w2', ttlMs: TTL }))!;
    assert.equal(second.lease.epoch, 2);
    await refused(log, 'LeaseNotCurrent', () => queue.extend(first.lease, TTL));
    await refused(log, 'LeaseNotCurrent', () => queue.startAttempt(first.lease, 'run-stale'));
    await refused(log, 'LeaseNotCurrent', () => queue.close(first.lease, { status: 'succeeded' }));
    const events = await eventsOf(log, async () => assert.equal(await queue.yield(first.lease, { kind: 'defer' }), false));
    assert.deepEqual(events, []);
    const extended = await queue.extend(second.lease, 60_000);
    assert.equal(extended.expiresAt, clock.nowMs + 60_000);
  });
}
