/** RunQueue contract, closing: a closed entry refuses everything, cancel, deleteThread, awaitClosed. */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { queueOn, refused, submitOf, type Backend } from '../fixtures.ts';

const TTL = 30_000;

export function closeTests(backend: Backend): void {
  it('anything on a closed entry is EntryClosed', async (t) => {
    const { queue, log } = await queueOn(backend, t);
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

  it('cancel closes an open entry cancelled; the running lease stops being current', async (t) => {
    const { queue, log } = await queueOn(backend, t);
    const ticket = await queue.submit(submitOf('acme', 't1'));
    const taken = (await queue.take({ agents: ['build'], holder: 'w', ttlMs: TTL }))!;
    const cancelled = await queue.cancel('acme', ticket.entryId, 'not needed');
    assert.equal(cancelled.outcome, 'cancelled');
    assert.equal(cancelled.error, 'not needed');
    await refused(log, 'EntryClosed', () => queue.extend(taken.lease, TTL));
    await assert.rejects(queue.cancel('globex', ticket.entryId), { code: 'TicketExpired' });
  });

  it('deleteThread closes every open entry of the thread', async (t) => {
    const { queue } = await queueOn(backend, t);
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
    const { queue } = await queueOn(backend, t);
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
}
