/**
 * Same-tick races, on every backend. Commands issued in one tick decide one after the
 * other against the view and share one group commit; each must answer what was made
 * durable for it (or a RunlogError), whatever the others of its tick did to the entry
 * afterwards, and awaitClosed must wake for an entry closed and pruned in one group.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { assertReplayEqualsLive, queueOn, submitOf, type Backend } from '../fixtures.ts';

const TTL = 30_000;
const take = { agents: ['build'], holder: 'w', ttlMs: TTL };

export function runQueueRaces(name: string, backend: Backend): void {
  // Only in process are commands called in one turn decided in call order (see Backend.sameTick).
  const skip = backend.sameTick === false && 'commands of one tick reach the queue in call order only in process';
  describe(`RunQueue same-tick races on ${name}`, { skip }, () => {
    it('close() in the tick of a prune that removes the entry answers the closed entry; awaitClosed wakes', async (t) => {
      const { queue, local } = await queueOn(backend, t);
      const ticket = await queue.submit(submitOf('acme', 't1'));
      const waiting = queue.awaitClosed('acme', ticket.entryId);
      const taken = (await queue.take(take))!;
      const [closed, pruned] = await Promise.all([queue.close(taken.lease, { status: 'succeeded', result: 'r' }), queue.prune(0, 10)]);
      assert.equal(pruned, 1);
      assert.deepEqual([closed.entryId, closed.status, closed.outcome], [ticket.entryId, 'closed', 'succeeded']);
      assert.equal(new TextDecoder().decode(closed.result!), 'r');
      const woken = await waiting;
      assert.deepEqual([woken!.entryId, woken!.outcome], [ticket.entryId, 'succeeded']);
      await assert.rejects(queue.entry('acme', ticket.entryId), { code: 'TicketExpired' });
      await assertReplayEqualsLive(local);
    });

    it('cancel() in the tick of a sweep that prunes the entry answers the cancelled entry; awaitClosed wakes', async (t) => {
      const { queue, local } = await queueOn(backend, t);
      const ticket = await queue.submit(submitOf('acme', 't1'));
      const waiters = [queue.awaitClosed('acme', ticket.entryId), queue.awaitClosed('acme', ticket.entryId)];
      const [cancelled, swept] = await Promise.all([queue.cancel('acme', ticket.entryId, 'stop'), local.sweep({ ticketLifetimeMs: 0 })]);
      assert.deepEqual(swept, { expired: 0, pruned: 1 });
      assert.deepEqual([cancelled.entryId, cancelled.outcome, cancelled.error], [ticket.entryId, 'cancelled', 'stop']);
      for (const woken of await Promise.all(waiters)) assert.equal(woken!.outcome, 'cancelled');
      await assertReplayEqualsLive(local);
    });

    it('take() in the tick of a cancel of the entry answers the lease it made durable', async (t) => {
      const { queue, local } = await queueOn(backend, t);
      const ticket = await queue.submit(submitOf('acme', 't1'));
      const [taken, cancelled] = await Promise.all([queue.take(take), queue.cancel('acme', ticket.entryId)]);
      assert.ok(taken !== null);
      assert.equal(taken.lease.entryId, ticket.entryId);
      assert.equal(taken.lease.epoch, 1);
      assert.deepEqual([taken.entry.status, taken.entry.lease], ['open', taken.lease]);
      assert.equal(cancelled.outcome, 'cancelled');
      await assert.rejects(queue.extend(taken.lease, TTL), { code: 'EntryClosed' });
      await assertReplayEqualsLive(local);
    });

    it('takeEntry() in the tick of a deleteThread answers the lease it made durable', async (t) => {
      const { queue, local } = await queueOn(backend, t);
      const ticket = await queue.submit(submitOf('acme', 't1'));
      const [taken, deleted] = await Promise.all([
        queue.takeEntry('acme', ticket.entryId, { holder: 'w', ttlMs: TTL }),
        queue.deleteThread('acme', 't1'),
      ]);
      assert.equal(deleted, 1);
      assert.ok(taken !== null);
      assert.deepEqual([taken.lease.entryId, taken.entry.status, taken.entry.lease], [ticket.entryId, 'open', taken.lease]);
      assert.equal((await queue.entry('acme', ticket.entryId)).outcome, 'threadDeleted');
      await assertReplayEqualsLive(local);
    });

    it('extend() in the tick of a cancel and a prune answers the lease it made durable', async (t) => {
      const { queue, local, clock } = await queueOn(backend, t);
      const ticket = await queue.submit(submitOf('acme', 't1'));
      const taken = (await queue.take(take))!;
      clock.advance(5);
      const [extended, , pruned] = await Promise.all([
        queue.extend(taken.lease, TTL),
        queue.cancel('acme', ticket.entryId),
        queue.prune(0, 10),
      ]);
      assert.equal(pruned, 1);
      assert.deepEqual(extended, { ...taken.lease, expiresAt: clock.nowMs + TTL });
      await assertReplayEqualsLive(local);
    });

    it('many closes, cancels and prunes in one tick: every answer is what was made durable, every waiter wakes', async (t) => {
      const { queue, local } = await queueOn(backend, t);
      const tickets = await Promise.all(Array.from({ length: 20 }, (_, i) => queue.submit(submitOf('acme', `t${i}`))));
      const waiters = tickets.map((ticket) => queue.awaitClosed('acme', ticket.entryId));
      const leases = (await Promise.all(tickets.slice(0, 10).map(() => queue.take(take)))).map((taken) => taken!.lease);
      const answers = await Promise.all([
        ...leases.map((lease) => queue.close(lease, { status: 'failed', error: 'e' })),
        queue.prune(0, 5),
        ...tickets
          .filter((ticket) => !leases.some((lease) => lease.entryId === ticket.entryId))
          .map((ticket) => queue.cancel('acme', ticket.entryId)),
        local.sweep({ ticketLifetimeMs: 0 }),
      ]);
      const entries = answers.filter((answer) => typeof answer === 'object' && 'entryId' in answer);
      assert.equal(entries.length, 20);
      for (const entry of entries) assert.equal(entry.status, 'closed');
      const woken = await Promise.all(waiters);
      assert.deepEqual(
        woken.map((entry) => entry!.entryId),
        tickets.map((ticket) => ticket.entryId),
      );
      assert.equal(
        local.views().reduce((sum, view) => sum + view.entries.size, 0),
        0,
        'everything closed in the tick was pruned',
      );
      await assertReplayEqualsLive(local);
    });
  });
}
