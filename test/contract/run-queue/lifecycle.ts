/** RunQueue contract, the queue as a whole: Stopped after stop, metrics, replay equals live. */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { assertReplayEqualsLive, queueOn, submitOf, type Backend } from '../fixtures.ts';

const TTL = 30_000;

export function lifecycleTests(backend: Backend): void {
  it('Stopped after stop', async (t) => {
    const { queue } = await queueOn(backend, t);
    const ticket = await queue.submit(submitOf('acme', 't1'));
    await queue.stop();
    await assert.rejects(queue.submit(submitOf('acme', 't1')), { code: 'Stopped' });
    await assert.rejects(queue.take({ agents: ['build'], holder: 'w', ttlMs: TTL }), { code: 'Stopped' });
    await assert.rejects(queue.entry('acme', ticket.entryId), { code: 'Stopped' });
  });

  it('metrics count the lifecycle; replay of the log equals the live view', async (t) => {
    const { queue, local, clock } = await queueOn(backend, t);
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
    const m = await queue.metrics();
    assert.equal(m.enqueued, 2);
    assert.equal(m.retried, 1);
    assert.equal(m.succeeded, 1);
    assert.equal(m.processed, 2);
    assert.equal(m.open, 1);
    assert.equal(m.maxExecMs, 30);
    await assertReplayEqualsLive(local);
  });
}
