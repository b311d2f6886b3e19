/**
 * The RunQueue semantics suite, run on every log backend (memory, file, Kafka) from this
 * one source. Decider style: given earlier commands, when a command, then the events it
 * appended or the refusal it answered (and then nothing written).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { assertReplayEqualsLive, eventsOf, queueOn, refused, submitOf, type OpenLog } from './fixtures.ts';

const TTL = 30_000;

export function runQueueSemantics(name: string, openLog: OpenLog): void {
  describe(`RunQueue semantics on ${name}`, () => {
    it('submit appends Submitted and answers a ticket; the entry reads open', async (t) => {
      const { queue, log, clock } = await queueOn(openLog, t);
      let ticket;
      const events = await eventsOf(
        log,
        async () => (ticket = await queue.submit(submitOf('acme', 't1', { priority: 3, metadata: { a: 'b' } }))),
      );
      // The partition's first submission also writes its ticket key.
      assert.deepEqual(
        events.map((e) => [e.type, e.at]),
        [
          ['TicketKeyCreated', clock.nowMs],
          ['Submitted', clock.nowMs],
        ],
      );
      const next = await eventsOf(log, () => queue.submit(submitOf('acme', 't1')));
      assert.deepEqual(
        next.map((e) => e.type),
        ['Submitted'],
      );
      const entry = await queue.entry('acme', ticket!.entryId);
      assert.equal(entry.status, 'open');
      assert.equal(entry.priority, 3);
      assert.deepEqual(entry.metadata, { a: 'b' });
      assert.equal(new TextDecoder().decode(entry.input), 'work of t1');
    });

    it('the input is copied: a caller reusing its buffer does not change the entry', async (t) => {
      const { queue } = await queueOn(openLog, t);
      const buffer = new TextEncoder().encode('original');
      const ticket = await queue.submit(submitOf('acme', 't1', { input: buffer }));
      buffer.fill(0);
      assert.equal(new TextDecoder().decode((await queue.entry('acme', ticket.entryId)).input), 'original');
      await assertReplayEqualsLive(queue);
    });

    it('reject strategy on a busy thread is ThreadBusy; enqueue queues behind', async (t) => {
      const { queue, log } = await queueOn(openLog, t);
      await queue.submit(submitOf('acme', 't1'));
      await refused(log, 'ThreadBusy', () => queue.submit(submitOf('acme', 't1', { strategy: 'reject' })));
      const second = await queue.submit(submitOf('acme', 't1', { strategy: 'enqueue' }));
      assert.equal((await queue.openEntries('acme', 't1')).length, 2);
      assert.ok(second.created);
      await queue.submit(submitOf('acme', 't2', { strategy: 'reject' }));
    });

    it('the same key answers the same ticket; with a different submission it is SubmissionKeyReused', async (t) => {
      const { queue, log } = await queueOn(openLog, t);
      const first = await queue.submit(submitOf('acme', 't1', { key: 'k1' }));
      const events = await eventsOf(log, async () => {
        const again = await queue.submit(submitOf('acme', 't1', { key: 'k1' }));
        assert.equal(again.entryId, first.entryId);
        assert.equal(again.created, false);
      });
      assert.deepEqual(events, []);
      await refused(log, 'SubmissionKeyReused', () => queue.submit(submitOf('acme', 't1', { key: 'k1', input: 'other' })));
    });

    it('a takeable head is leased by priority, then age', async (t) => {
      const { queue, clock } = await queueOn(openLog, t);
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
      const { queue } = await queueOn(openLog, t);
      const first = await queue.submit(submitOf('acme', 't1'));
      const second = await queue.submit(submitOf('acme', 't1', { priority: 9 }));
      const taken = await queue.take({ agents: ['build'], holder: 'w', ttlMs: TTL });
      assert.equal(taken!.lease.entryId, first.entryId);
      assert.equal(await queue.take({ agents: ['build'], holder: 'w2', ttlMs: TTL }), null);
      await queue.close(taken!.lease, { status: 'succeeded' });
      assert.equal((await queue.take({ agents: ['build'], holder: 'w2', ttlMs: TTL }))!.lease.entryId, second.entryId);
    });

    it('take only leases entries of the agents asked for', async (t) => {
      const { queue } = await queueOn(openLog, t);
      await queue.submit(submitOf('acme', 't1', { agent: 'deploy' }));
      assert.equal(await queue.take({ agents: ['build'], holder: 'w', ttlMs: TTL }), null);
      assert.ok(await queue.take({ agents: ['build', 'deploy'], holder: 'w', ttlMs: TTL }));
    });

    it('an expired lease is takeable again by the store clock; the stale lease is then refused, and ignored on yield', async (t) => {
      const { queue, log, clock } = await queueOn(openLog, t);
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

    it('startAttempt records the attempt; a run id names at most one run on its thread (RunIdReused)', async (t) => {
      const { queue, log } = await queueOn(openLog, t);
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
      const { queue, clock } = await queueOn(openLog, t);
      await queue.submit(submitOf('acme', 't1'));
      const taken = (await queue.take({ agents: ['build'], holder: 'w', ttlMs: TTL }))!;
      await queue.yield(taken.lease, { kind: 'retry', error: 'boom', delayMs: 1000 });
      assert.equal(queue.nextDueAt(['build']), clock.nowMs + 1000);
      clock.advance(999);
      assert.equal(await queue.take({ agents: ['build'], holder: 'w', ttlMs: TTL }), null);
      clock.advance(1);
      const again = (await queue.take({ agents: ['build'], holder: 'w', ttlMs: TTL }))!;
      await queue.yield(again.lease, { kind: 'defer' });
      assert.ok(await queue.take({ agents: ['build'], holder: 'w', ttlMs: TTL }));
    });

    it('an attempt handed back unfinished (defer after startAttempt) is counted as deferred, a retry is not', async (t) => {
      const { queue } = await queueOn(openLog, t);
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
      await assertReplayEqualsLive(queue);
    });

    it('anything on a closed entry is EntryClosed', async (t) => {
      const { queue, log } = await queueOn(openLog, t);
      const ticket = await queue.submit(submitOf('acme', 't1'));
      const taken = (await queue.take({ agents: ['build'], holder: 'w', ttlMs: TTL }))!;
      const closed = await queue.close(taken.lease, { status: 'succeeded', result: 'done' });
      assert.equal(closed.outcome, 'succeeded');
      assert.equal(new TextDecoder().decode(closed.result!), 'done');
      await refused(log, 'EntryClosed', () => queue.extend(taken.lease, TTL));
      await refused(log, 'EntryClosed', () => queue.startAttempt(taken.lease, 'r'));
      await refused(log, 'EntryClosed', () => queue.close(taken.lease, { status: 'failed' }));
      await refused(log, 'EntryClosed', () => queue.yield(taken.lease, { kind: 'defer' }));
      await refused(log, 'EntryClosed', () => queue.cancel('acme', ticket.entryId));
    });

    it("TicketExpired for a pruned entry and for another tenant's; TicketNotFound for never issued or forged ids", async (t) => {
      const { queue, clock } = await queueOn(openLog, t);
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
      const { queue, clock } = await queueOn(openLog, t);
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
      await assertReplayEqualsLive(queue);
    });

    it('ticket ids are never reused after every entry is pruned and compacted away', async (t) => {
      const { queue, log } = await queueOn(openLog, t, { partitions: 1 });
      const old = await queue.submit(submitOf('acme', 't1'));
      const taken = (await queue.take({ agents: ['build'], holder: 'w', ttlMs: TTL }))!;
      await queue.close(taken.lease, { status: 'succeeded' });
      await queue.prune(0, 10);
      await log.compact(0);
      await assertReplayEqualsLive(queue);
      const fresh = await queue.submit(submitOf('acme', 't1'));
      assert.notEqual(fresh.entryId, old.entryId);
      await assert.rejects(queue.entry('acme', old.entryId), { code: 'TicketExpired' });
    });

    it('a retention sweep expires overdue entries and prunes closed ones past their lifetime', async (t) => {
      const { queue, clock } = await queueOn(openLog, t);
      const doomed = await queue.submit(submitOf('acme', 'a', { agent: 'report', deadline: clock.nowMs + 5 }));
      const done = await queue.submit(submitOf('acme', 'b'));
      const taken = (await queue.take({ agents: ['build'], holder: 'w', ttlMs: TTL }))!;
      assert.equal(taken.lease.entryId, done.entryId);
      await queue.close(taken.lease, { status: 'succeeded' });
      clock.advance(10);
      assert.deepEqual(await queue.sweep({ ticketLifetimeMs: 1000 }), { expired: 1, pruned: 0 });
      assert.equal((await queue.entry('acme', doomed.entryId)).outcome, 'expired');
      clock.advance(1000);
      assert.deepEqual(await queue.sweep({ ticketLifetimeMs: 1000, limit: 5 }), { expired: 0, pruned: 2 });
      await assert.rejects(queue.entry('acme', done.entryId), { code: 'TicketExpired' });
    });

    it('capacity refuses submissions with QueueFull, per tenant and in total', async (t) => {
      const { queue, log } = await queueOn(openLog, t, { capacity: { perTenant: 2, total: 3 } });
      await queue.submit(submitOf('acme', 'a'));
      await queue.submit(submitOf('acme', 'b'));
      await refused(log, 'QueueFull', () => queue.submit(submitOf('acme', 'c')));
      await queue.submit(submitOf('globex', 'a'));
      await refused(log, 'QueueFull', () => queue.submit(submitOf('initech', 'a')));
      const taken = (await queue.take({ agents: ['build'], holder: 'w', ttlMs: TTL }))!;
      await queue.close(taken.lease, { status: 'succeeded' });
      await queue.submit(submitOf('initech', 'a'));
    });

    it('notBefore delays an entry; a start deadline closes it expired, unrun', async (t) => {
      const { queue, clock } = await queueOn(openLog, t);
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
      assert.equal(await queue.expireOverdue(), 1);
      assert.equal((await queue.entry('acme', swept.entryId)).outcome, 'expired');
      assert.equal(queue.metrics().expired, 2);
    });

    it('cancel closes an open entry cancelled; the running lease stops being current', async (t) => {
      const { queue, log } = await queueOn(openLog, t);
      const ticket = await queue.submit(submitOf('acme', 't1'));
      const taken = (await queue.take({ agents: ['build'], holder: 'w', ttlMs: TTL }))!;
      const cancelled = await queue.cancel('acme', ticket.entryId, 'not needed');
      assert.equal(cancelled.outcome, 'cancelled');
      assert.equal(cancelled.error, 'not needed');
      await refused(log, 'EntryClosed', () => queue.extend(taken.lease, TTL));
      await assert.rejects(queue.cancel('globex', ticket.entryId), { code: 'TicketExpired' });
    });

    it('deleteThread closes every open entry of the thread', async (t) => {
      const { queue } = await queueOn(openLog, t);
      const a = await queue.submit(submitOf('acme', 't1'));
      await queue.submit(submitOf('acme', 't1'));
      await queue.submit(submitOf('acme', 't2'));
      assert.equal(await queue.deleteThread('acme', 't1'), 2);
      assert.deepEqual(await queue.openEntries('acme', 't1'), []);
      assert.equal((await queue.entry('acme', a.entryId)).outcome, 'threadDeleted');
      assert.equal((await queue.openEntries('acme', 't2')).length, 1);
      assert.equal(await queue.deleteThread('acme', 'nothing'), 0);
    });

    it('awaitClosed is woken by the close, and answers null on timeout', async (t) => {
      const { queue } = await queueOn(openLog, t);
      const ticket = await queue.submit(submitOf('acme', 't1'));
      assert.equal(await queue.awaitClosed('acme', ticket.entryId, { timeoutMs: 5 }), null);
      const waiting = queue.awaitClosed('acme', ticket.entryId);
      const taken = (await queue.take({ agents: ['build'], holder: 'w', ttlMs: TTL }))!;
      await queue.close(taken.lease, { status: 'failed', error: 'nope' });
      const closed = await waiting;
      assert.equal(closed!.outcome, 'failed');
      assert.equal(closed!.error, 'nope');
      const aborted = new AbortController();
      const other = await queue.submit(submitOf('acme', 't2'));
      const pending = queue.awaitClosed('acme', other.entryId, { signal: aborted.signal });
      aborted.abort(new Error('gave up'));
      await assert.rejects(pending, /gave up/);
    });

    it('bad input is InvalidArgument naming the value, and writes nothing', async (t) => {
      const { queue, log } = await queueOn(openLog, t, { maxInputBytes: 1024 });
      const bad: [string, () => Promise<unknown>][] = [
        ['tenant', () => queue.submit({ thread: 't', agent: 'a', input: 'x' } as never)],
        ['oversized', () => queue.submit(submitOf('acme', 't', { input: new Uint8Array(2048) }))],
        ['priority', () => queue.submit(submitOf('acme', 't', { priority: 1.5 }))],
        ['strategy', () => queue.submit(submitOf('acme', 't', { strategy: 'sometimes' }))],
        ['colour', () => queue.submit(submitOf('acme', 't', { colour: 'red' }))],
        ['ttlMs', () => queue.take({ agents: ['build'], holder: 'w', ttlMs: -5 })],
        ['agents', () => queue.take({ agents: [], holder: 'w', ttlMs: 5 })],
      ];
      for (const [name, action] of bad) {
        await refused(log, 'InvalidArgument', action);
        await assert.rejects(action, (error: Error) => error.message.includes(name === 'oversized' ? '2048' : name), name);
      }
      await queue.submit(submitOf('acme', 't'));
      const taken = (await queue.take({ agents: ['build'], holder: 'w', ttlMs: 10 }))!;
      await refused(log, 'InvalidArgument', () => queue.extend(taken.lease, -1));
      await refused(log, 'InvalidArgument', () => queue.close(taken.lease, { status: 'maybe' as never }));
    });

    it('Stopped after stop', async (t) => {
      const { queue } = await queueOn(openLog, t);
      const ticket = await queue.submit(submitOf('acme', 't1'));
      await queue.stop();
      await assert.rejects(queue.submit(submitOf('acme', 't1')), { code: 'Stopped' });
      await assert.rejects(queue.take({ agents: ['build'], holder: 'w', ttlMs: TTL }), { code: 'Stopped' });
      await assert.rejects(queue.entry('acme', ticket.entryId), { code: 'Stopped' });
    });

    it('metrics count the lifecycle; replay of the log equals the live view', async (t) => {
      const { queue, clock } = await queueOn(openLog, t);
      await queue.submit(submitOf('acme', 't1'));
      await queue.submit(submitOf('acme', 't2'));
      clock.advance(50);
      const a = (await queue.take({ agents: ['build'], holder: 'w', ttlMs: TTL }))!;
      await queue.startAttempt(a.lease, 'r1');
      clock.advance(20);
      await queue.yield(a.lease, { kind: 'retry', error: 'flaky', delayMs: 10 });
      clock.advance(10);
      const b = (await queue.take({ agents: ['build'], holder: 'w', ttlMs: TTL }))!;
      await queue.startAttempt(b.lease, 'r2');
      clock.advance(30);
      await queue.close(b.lease, { status: 'succeeded' });
      const m = queue.metrics();
      assert.equal(m.enqueued, 2);
      assert.equal(m.retried, 1);
      assert.equal(m.succeeded, 1);
      assert.equal(m.processed, 2);
      assert.equal(m.open, 1);
      assert.equal(m.maxExecMs, 30);
      await assertReplayEqualsLive(queue);
    });
  });
}
