/** RunQueue contract, take: which head is leased (priority, age, thread order, agents, tenants, notBefore, start deadline). */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { queueOn, refused, submitOf, type Backend } from '../fixtures.ts';
import type { RunQueueApi } from '../../../src/queue/types.ts';

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

  tenantFilterTests(backend);
}

/** Takes with a tenant filter: only those tenants' heads, in take order among them; nothing written when the filter is bad. */
export function tenantFilterTests(backend: Backend): void {
  const take = (queue: RunQueueApi, tenants?: readonly string[]) =>
    queue.take({ agents: ['build'], holder: 'w', ttlMs: TTL, ...(tenants === undefined ? {} : { tenants }) });

  it('a take naming tenants leases only their entries, by priority then age among them', async (t) => {
    const { queue, clock } = await queueOn(backend, t);
    // Another tenant's heads sort first (higher priority, older): the filtered takes must pass them by.
    const acme = await queue.submit(submitOf('acme', 'a', { priority: 9 }));
    clock.advance(1);
    const globexLow = await queue.submit(submitOf('globex', 'g1', { priority: 0 }));
    clock.advance(1);
    const initechHigh = await queue.submit(submitOf('initech', 'i1', { priority: 3 }));
    clock.advance(1);
    const globexHigh = await queue.submit(submitOf('globex', 'g2', { priority: 3 }));
    const order: string[] = [];
    for (let i = 0; i < 3; i++) order.push((await take(queue, ['globex', 'initech']))!.lease.entryId);
    assert.deepEqual(order, [initechHigh.entryId, globexHigh.entryId, globexLow.entryId]);
    assert.equal(await take(queue, ['globex', 'initech']), null, "acme's head is not theirs");
    assert.equal((await queue.entry('acme', acme.entryId)).lease, null, "acme's entry was not leased");
    assert.equal((await take(queue, ['acme']))!.lease.entryId, acme.entryId);
  });

  it("a filtered take keeps thread order and never takes another tenant's head, also among many", async (t) => {
    const { queue, clock } = await queueOn(backend, t);
    for (let i = 0; i < 40; i++) await queue.submit(submitOf('acme', `busy-${i}`, { priority: 5 }));
    clock.advance(1);
    const first = await queue.submit(submitOf('globex', 'g'));
    const second = await queue.submit(submitOf('globex', 'g'));
    const taken = (await take(queue, ['globex']))!;
    assert.deepEqual([taken.entry.tenant, taken.lease.entryId], ['globex', first.entryId]);
    assert.equal(await take(queue, ['globex']), null, 'the second entry of the thread waits for the first');
    await queue.close(taken.lease, { status: 'succeeded' });
    assert.equal((await take(queue, ['globex']))!.lease.entryId, second.entryId);
    assert.equal((await queue.metrics()).open, 41);
    assert.equal((await take(queue))!.entry.tenant, 'acme', 'an unfiltered take takes any tenant');
  });

  it('nextDueAt with tenants answers when their next head is due, not the others', async (t) => {
    const { queue, clock } = await queueOn(backend, t);
    await queue.submit(submitOf('acme', 'a', { notBefore: clock.nowMs + 1_000 }));
    await queue.submit(submitOf('globex', 'g', { notBefore: clock.nowMs + 5_000 }));
    assert.equal(await queue.nextDueAt(['build']), clock.nowMs + 1_000);
    assert.equal(await queue.nextDueAt(['build'], ['globex']), clock.nowMs + 5_000);
    assert.equal(await queue.nextDueAt(['build'], ['initech']), null);
    clock.advance(1_000);
    assert.equal(await take(queue, ['globex']), null, "globex's head is not due yet; acme's is");
    assert.equal((await take(queue, ['acme', 'initech']))!.entry.tenant, 'acme');
  });

  it('nextDueAt of a head takeable now is a time not after now (what a Worker whose take stopped short asks), null once taken', async (t) => {
    const { queue, clock } = await queueOn(backend, t);
    await queue.submit(submitOf('acme', 'a'));
    await queue.submit(submitOf('acme', 'b', { notBefore: clock.nowMs + 5_000 }));
    clock.advance(10);
    const due = await queue.nextDueAt(['build']);
    assert.ok(due !== null && due <= clock.nowMs, `takeable now: ${due} is not after ${clock.nowMs}`);
    assert.ok((await take(queue)) !== null);
    assert.equal(await queue.nextDueAt(['build']), clock.nowMs + 4_990, 'taken: the delayed head is next');
    clock.advance(5_000);
    assert.equal(await queue.nextDueAt(['build']), clock.nowMs - 10, 'due already: when it became takeable');
    assert.equal(await queue.nextDueAt(['build'], ['globex']), null, "not another tenant's");
  });

  it('a malformed tenants list is InvalidArgument naming the value, and nothing is written or leased', async (t) => {
    const { queue, log } = await queueOn(backend, t);
    const ticket = await queue.submit(submitOf('acme', 'a'));
    const bad: [unknown, string][] = [
      [[], '[]'],
      ['acme', '"acme"'],
      [[''], '""'],
      [['acme', 7], '7'],
      [null, 'null'],
    ];
    for (const [tenants, shown] of bad) {
      const action = () => queue.take({ agents: ['build'], tenants, holder: 'w', ttlMs: TTL } as never);
      await refused(log, 'InvalidArgument', action);
      await assert.rejects(action, (error: Error) => error.message.includes('tenants') && error.message.includes(shown), shown);
    }
    assert.equal((await queue.entry('acme', ticket.entryId)).lease, null);
  });
}
