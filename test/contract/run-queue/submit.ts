/** RunQueue contract, submit: the events and ticket it answers, strategies, submission keys, capacity. */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { assertReplayEqualsLive, eventsOf, queueOn, refused, submitOf, type Backend } from '../fixtures.ts';

const TTL = 30_000;

export function submitTests(backend: Backend): void {
  it('submit appends Submitted and answers a ticket; the entry reads open', async (t) => {
    const { queue, log, clock } = await queueOn(backend, t);
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
    const { queue, local } = await queueOn(backend, t);
    const buffer = new TextEncoder().encode('original');
    const ticket = await queue.submit(submitOf('acme', 't1', { input: buffer }));
    buffer.fill(0);
    assert.equal(new TextDecoder().decode((await queue.entry('acme', ticket.entryId)).input), 'original');
    await assertReplayEqualsLive(local);
  });

  it('reject strategy on a busy thread is ThreadBusy; enqueue queues behind', async (t) => {
    const { queue, log } = await queueOn(backend, t);
    await queue.submit(submitOf('acme', 't1'));
    await refused(log, 'ThreadBusy', () => queue.submit(submitOf('acme', 't1', { strategy: 'reject' })));
    const second = await queue.submit(submitOf('acme', 't1', { strategy: 'enqueue' }));
    assert.equal((await queue.openEntries('acme', 't1')).length, 2);
    assert.ok(second.created);
    await queue.submit(submitOf('acme', 't2', { strategy: 'reject' }));
  });

  it('the same key answers the same ticket; with a different submission it is SubmissionKeyReused', async (t) => {
    const { queue, log } = await queueOn(backend, t);
    const first = await queue.submit(submitOf('acme', 't1', { key: 'k1' }));
    const events = await eventsOf(log, async () => {
      const again = await queue.submit(submitOf('acme', 't1', { key: 'k1' }));
      assert.equal(again.entryId, first.entryId);
      assert.equal(again.created, false);
    });
    assert.deepEqual(events, []);
    await refused(log, 'SubmissionKeyReused', () => queue.submit(submitOf('acme', 't1', { key: 'k1', input: 'other' })));
  });

  it('capacity refuses submissions with QueueFull, per tenant and in total', async (t) => {
    const { queue, log } = await queueOn(backend, t, { capacity: { perTenant: 2, total: 3 } });
    await queue.submit(submitOf('acme', 'a'));
    await queue.submit(submitOf('acme', 'b'));
    await refused(log, 'QueueFull', () => queue.submit(submitOf('acme', 'c')));
    await queue.submit(submitOf('globex', 'a'));
    await refused(log, 'QueueFull', () => queue.submit(submitOf('initech', 'a')));
    const taken = (await queue.take({ agents: ['build'], holder: 'w', ttlMs: TTL }))!;
    await queue.close(taken.lease, { status: 'succeeded' });
    await queue.submit(submitOf('initech', 'a'));
  });
}
