/** RunQueue contract, retention: tickets of pruned entries, prune, ids never reused, the retention sweep. */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { assertReplayEqualsLive, queueOn, submitOf, type Backend } from '../fixtures.ts';

const TTL = 30_000;

export function retentionTests(backend: Backend): void {
  it("TicketExpired for a pruned entry and for another tenant's; TicketNotFound for never issued or forged ids", async (t) => {
    const { queue, clock } = await queueOn(backend, t);
    const ticket = await queue.submit(submitOf('acme', 't1'));
    await assert.rejects(queue.entry('globex', ticket.entryId), { code: 'TicketExpired' });
    for (const forged of ['0-999999', 'nonsense', '99-1', '', '1-0', '01-1']) {
      await assert.rejects(queue.entry('acme', forged), { code: 'TicketNotFound' }, forged);
    }
    const taken = (await queue.take({ agents: ['build'], holder: 'w', ttlMs: TTL }))!;
    await queue.close(taken.lease, { status: 'succeeded' });
    clock.advance(1000);
    assert.equal(await queue.prune(1000, 10), 1);
    await assert.rejects(queue.entry('acme', ticket.entryId), { code: 'TicketExpired' });
    await assert.rejects(queue.entry('globex', ticket.entryId), { code: 'TicketExpired' });
  });

  it('prune removes only closed entries, oldest close first, up to limit, after their lifetime', async (t) => {
    const { queue, local, clock } = await queueOn(backend, t);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await queue.submit(submitOf('acme', `t${i}`))).entryId);
    const closedOrder: string[] = [];
    for (let i = 0; i < 4; i++) {
      const taken = (await queue.take({ agents: ['build'], holder: 'w', ttlMs: TTL }))!;
      await queue.close(taken.lease, { status: i % 2 === 0 ? 'succeeded' : 'failed' });
      closedOrder.push(taken.lease.entryId);
      clock.advance(100);
    }
    assert.equal(await queue.prune(10_000, 10), 0, 'nothing is past its lifetime yet');
    clock.advance(10_000);
    assert.equal(await queue.prune(10_000, 2), 2);
    for (const id of closedOrder.slice(0, 2)) await assert.rejects(queue.entry('acme', id), { code: 'TicketExpired' });
    for (const id of closedOrder.slice(2)) assert.equal((await queue.entry('acme', id)).status, 'closed');
    assert.equal(await queue.prune(0, 100), 2);
    const open = ids.filter((id) => !closedOrder.includes(id));
    assert.equal((await queue.entry('acme', open[0]!)).status, 'open');
    await assertReplayEqualsLive(local);
  });

  it('ticket ids are never reused after every entry is pruned and compacted away', async (t) => {
    const { queue, local, log } = await queueOn(backend, t, { partitions: 1 });
    const old = await queue.submit(submitOf('acme', 't1'));
    const taken = (await queue.take({ agents: ['build'], holder: 'w', ttlMs: TTL }))!;
    await queue.close(taken.lease, { status: 'succeeded' });
    await queue.prune(0, 10);
    await log.compact(0);
    await assertReplayEqualsLive(local);
    const fresh = await queue.submit(submitOf('acme', 't1'));
    assert.notEqual(fresh.entryId, old.entryId);
    await assert.rejects(queue.entry('acme', old.entryId), { code: 'TicketExpired' });
  });

  it("a closed entry's deferred attempts survive compaction: the closing record carries them (Closed, CancelRequested v2)", async (t) => {
    const { queue, local, log } = await queueOn(backend, t, { partitions: 1 });
    const deferOnce = async (thread: string) => {
      const ticket = await queue.submit(submitOf('acme', thread));
      const first = (await queue.take({ agents: ['build'], holder: 'w', ttlMs: TTL }))!;
      await queue.startAttempt(first.lease, `${thread}-run-1`);
      await queue.yield(first.lease, { kind: 'defer' });
      const second = (await queue.take({ agents: ['build'], holder: 'w', ttlMs: TTL }))!;
      await queue.startAttempt(second.lease, `${thread}-run-2`);
      return { ticket, lease: second.lease };
    };
    const done = await deferOnce('t1');
    await queue.close(done.lease, { status: 'succeeded' });
    const cancelled = await deferOnce('t2');
    await queue.cancel('acme', cancelled.ticket.entryId, 'no longer needed');
    await log.compact(0); // the state records (Leased, with deferredAttempts 1) are superseded by the closing ones
    for (const ticket of [done.ticket, cancelled.ticket]) assert.equal((await queue.entry('acme', ticket.entryId)).deferredAttempts, 1);
    await assertReplayEqualsLive(local);
  });

  it('a retention sweep expires overdue entries and prunes closed ones past their lifetime', async (t) => {
    const { queue, local, clock } = await queueOn(backend, t);
    const doomed = await queue.submit(submitOf('acme', 'a', { agent: 'report', deadline: clock.nowMs + 5 }));
    const done = await queue.submit(submitOf('acme', 'b'));
    const taken = (await queue.take({ agents: ['build'], holder: 'w', ttlMs: TTL }))!;
    assert.equal(taken.lease.entryId, done.entryId);
    await queue.close(taken.lease, { status: 'succeeded' });
    clock.advance(10);
    assert.deepEqual(await local.sweep({ ticketLifetimeMs: 1000 }), { expired: 1, pruned: 0 });
    assert.equal((await queue.entry('acme', doomed.entryId)).outcome, 'expired');
    clock.advance(1000);
    assert.deepEqual(await local.sweep({ ticketLifetimeMs: 1000, limit: 5 }), { expired: 0, pruned: 2 });
    await assert.rejects(queue.entry('acme', done.entryId), { code: 'TicketExpired' });
  });
}
