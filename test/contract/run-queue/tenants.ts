/**
 * Tenant isolation (DESIGN invariant 5), on every backend: ticket ids carry an unguessable
 * part, so no tenant can enumerate or count another's tickets; another tenant's entry reads
 * exactly like a pruned one; a forged id is TicketNotFound, also after prune, compaction
 * and replay; refusals say nothing about other tenants; answers come from the stored state.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RunlogError } from '../../../src/errors.ts';
import { encodeEvent } from '../../../src/events/codec.ts';
import { recordKeyOf } from '../../../src/events/keys.ts';
import type { Submitted } from '../../../src/events/types.ts';
import { replayPartition } from '../../../src/projector/replay.ts';
import * as decide from '../../../src/queue/decide.ts';
import type { EventLog } from '../../../src/log/event-log.ts';
import { assertReplayEqualsLive, queueOn, refused, submitOf, type Backend, type FakeClock } from '../fixtures.ts';
import { submittedEvent } from '../../../bench/submitted-event.ts';

const TTL = 30_000;
const TOKEN_ID = /^\d+-[A-Za-z0-9_-]{22}$/;

/** The refusal `action` answers (it must refuse with a RunlogError). */
async function refusal(action: () => Promise<unknown>): Promise<RunlogError> {
  try {
    await action();
  } catch (error) {
    if (error instanceof RunlogError) return error;
    throw error;
  }
  assert.fail('expected a refusal');
}

/** The same id with one character of its token changed (still shaped like an id). */
function forge(entryId: string): string {
  const at = entryId.length - 5;
  return entryId.slice(0, at) + (entryId[at] === 'a' ? 'b' : 'a') + entryId.slice(at + 1);
}

export function runQueueTenants(name: string, backend: Backend): void {
  describe(`RunQueue tenant isolation on ${name}`, () => {
    it('probing ids tells another tenant nothing: the ids of the issued sequence read TicketNotFound', async (t) => {
      const { queue } = await queueOn(backend, t, { partitions: 2 });
      const tickets = [];
      for (let i = 0; i < 6; i++) tickets.push(await queue.submit(submitOf('acme', `t${i}`)));
      for (const ticket of tickets) assert.match(ticket.entryId, TOKEN_ID);
      assert.equal(new Set(tickets.map((ticket) => ticket.entryId)).size, tickets.length);
      for (let partition = 0; partition < 2; partition++) {
        for (let seq = 1; seq <= 8; seq++) {
          for (const tenant of ['globex', 'acme']) {
            const error = await refusal(() => queue.entry(tenant, `${partition}-${seq}`));
            assert.equal(error.code, 'TicketNotFound', `${tenant} probing ${partition}-${seq}`);
          }
        }
      }
    });

    it("another tenant's entry reads like a pruned one; a forged id is TicketNotFound, also after prune, compaction and replay", async (t) => {
      const { queue, local, log, clock } = await queueOn(backend, t, { partitions: 1 });
      const ticket = await queue.submit(submitOf('acme', 't1'));
      const forged = forge(ticket.entryId);
      const live = await refusal(() => queue.entry('globex', ticket.entryId));
      assert.equal(live.code, 'TicketExpired');
      for (const tenant of ['acme', 'globex']) assert.equal((await refusal(() => queue.entry(tenant, forged))).code, 'TicketNotFound');
      await queue.cancel('acme', ticket.entryId);
      clock.advance(10);
      assert.equal(await queue.prune(0, 10), 1);
      const pruned = await refusal(() => queue.entry('globex', ticket.entryId));
      assert.deepEqual(
        [pruned.code, pruned.message],
        [live.code, live.message],
        'read by another tenant, a live entry and a pruned one look alike',
      );
      await log.compact(0);
      await assertReplayEqualsLive(local);
      const replayed = await replayPartition(log, 0);
      for (const view of [local.views()[0]!, replayed]) {
        assert.throws(() => decide.findEntry(view, 'acme', ticket.entryId), { code: 'TicketExpired' });
        assert.throws(() => decide.findEntry(view, 'acme', forged), { code: 'TicketNotFound' });
      }
      const fresh = await queue.submit(submitOf('acme', 't1'));
      assert.notEqual(fresh.entryId, ticket.entryId);
      await assert.rejects(queue.entry('acme', ticket.entryId), { code: 'TicketExpired' });
      await assert.rejects(queue.entry('acme', forged), { code: 'TicketNotFound' });
    });

    it('QueueFull says nothing about the other tenants', async (t) => {
      const { queue, log } = await queueOn(backend, t, { capacity: { perTenant: 5, total: 3 } });
      for (const tenant of ['acme', 'acme', 'globex']) await queue.submit(submitOf(tenant, 't'));
      await refused(log, 'QueueFull', () => queue.submit(submitOf('initech', 't')));
      const error = await refusal(() => queue.submit(submitOf('initech', 't')));
      assert.doesNotMatch(error.message, /\d|acme|globex/);
    });

    it("extend answers the stored lease, never the caller's edited copy", async (t) => {
      const { queue, log, clock } = await queueOn(backend, t);
      await queue.submit(submitOf('acme', 't1'));
      const { lease } = (await queue.take({ agents: ['build'], holder: 'w', ttlMs: TTL }))!;
      clock.advance(5);
      const extended = await queue.extend({ ...lease, thread: 'someone-elses', agent: 'other', expiresAt: 1 }, TTL);
      assert.deepEqual(extended, { ...lease, expiresAt: clock.nowMs + TTL });
      await refused(log, 'TicketExpired', () => queue.extend({ ...lease, tenant: 'globex' }, TTL));
    });

    it('a log of plain <partition>-<seq> ids: those entries keep their ids; only they read as issued once gone', async (t) => {
      const legacy = (seq: number, at: number): Submitted =>
        submittedEvent({ tenant: 'acme', thread: 'old', entryId: `0-${seq}`, seq, at });
      const prepare = async (log: EventLog, clock: FakeClock): Promise<void> => {
        const events = [legacy(1, clock.nowMs), legacy(2, clock.nowMs)];
        await log.append(
          0,
          events.map((event) => ({ key: recordKeyOf(event), value: encodeEvent(event) })),
        );
      };
      const { queue, local } = await queueOn(backend, t, { partitions: 1, prepare });
      assert.equal((await queue.entry('acme', '0-1')).status, 'open');
      await assert.rejects(queue.entry('acme', '0-3'), { code: 'TicketNotFound' });
      const fresh = await queue.submit(submitOf('acme', 'new'));
      assert.match(fresh.entryId, TOKEN_ID);
      assert.equal(local.views()[0]!.ticketKey!.legacyThrough, 2);
      await queue.deleteThread('acme', 'old');
      await queue.cancel('acme', fresh.entryId);
      assert.equal(await queue.prune(0, 10), 3);
      for (const id of ['0-1', '0-2', fresh.entryId]) await assert.rejects(queue.entry('acme', id), { code: 'TicketExpired' }, id);
      for (const id of ['0-3', '0-4', forge(fresh.entryId)]) await assert.rejects(queue.entry('acme', id), { code: 'TicketNotFound' }, id);
      await assertReplayEqualsLive(local);
    });
  });
}
