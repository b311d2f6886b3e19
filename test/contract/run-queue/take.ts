/** RunQueue contract, take: which head is leased (priority, age, thread order, agents, notBefore, start deadline). */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { queueOn, submitOf, type Backend } from '../fixtures.ts';

const TTL = 30_000;

export function takeTests(backend: Backend): void {
  it('a takeable head is leased by priority, then age', async (t) => {
    const { queue, clock } = await queueOn(backend, t);
    const low = await queue.submit(submitOf('acme', 'a', { priority: 0 }));
    clock.advance(1);
    const highOld = await queue.submit(submitOf('acme', 'b', { priority: 5 }));
    clock.advance(1);
    const highNew = await queue.submit(submitOf('acme', 'c', { priority: 5 }));
    const order = [];
    for (let i = 0; i < 3; i++) order.push((await queue.take({ agents: ['build'], holder: 'w', ttlMs: TTL }))!.lease.entryId);
    assert.deepEqual(order, [highOld.entryId, highNew.entryId, low.entryId]);
    assert.equal(await queue.take({ agents: ['build'], holder: 'w', ttlMs: TTL }), null);
  });

  it('per-thread order: only the head is takeable, entries run one at a time in submission order', async (t) => {
    const { queue } = await queueOn(backend, t);
    const first = await queue.submit(submitOf('acme', 't1'));
    const second = await queue.submit(submitOf('acme', 't1', { priority: 9 }));
    const taken = await queue.take({ agents: ['build'], holder: 'w', ttlMs: TTL });
    assert.equal(taken!.lease.entryId, first.entryId);
    assert.equal(await queue.take({ agents: ['build'], holder: 'w2', ttlMs: TTL }), null);
    await queue.close(taken!.lease, { status: 'succeeded' });
    assert.equal((await queue.take({ agents: ['build'], holder: 'w2', ttlMs: TTL }))!.lease.entryId, second.entryId);
  });

  it('take only leases entries of the agents asked for', async (t) => {
    const { queue } = await queueOn(backend, t);
    await queue.submit(submitOf('acme', 't1', { agent: 'deploy' }));
    assert.equal(await queue.take({ agents: ['build'], holder: 'w', ttlMs: TTL }), null);
    assert.ok(await queue.take({ agents: ['build', 'deploy'], holder: 'w', ttlMs: TTL }));
  });

  it('notBefore delays an entry; a start deadline closes it expired, unrun', async (t) => {
    const { queue, local, clock } = await queueOn(backend, t);
    const later = await queue.submit(submitOf('acme', 'a', { notBefore: clock.nowMs + 5000 }));
    const doomed = await queue.submit(submitOf('acme', 'b', { deadline: clock.nowMs + 1000 }));
    clock.advance(2000);
    assert.equal(await queue.take({ agents: ['build'], holder: 'w', ttlMs: TTL }), null);
    const expired = await queue.entry('acme', doomed.entryId);
    assert.equal(expired.outcome, 'expired');
    assert.equal(expired.attempts.length, 0);
    clock.advance(3000);
    assert.equal((await queue.take({ agents: ['build'], holder: 'w', ttlMs: TTL }))!.lease.entryId, later.entryId);
    const swept = await queue.submit(submitOf('acme', 'c', { deadline: clock.nowMs + 10 }));
    clock.advance(10);
    assert.equal(await local.expireOverdue(), 1);
    assert.equal((await queue.entry('acme', swept.entryId)).outcome, 'expired');
    assert.equal((await queue.metrics()).expired, 2);
  });
}
