/**
 * The overdue rule (decide.ts `isOverdue`) through the whole queue: a start deadline is a
 * start deadline, and a lease is not a start. The sweep used to spare an entry a lease held,
 * and dropped it from its deadline index for good, so an entry leased but never started (its
 * holder gone) was never swept: it stayed open, counted against capacity, until some take of
 * its agent happened to reach it.
 */
import assert from 'node:assert/strict';
import { describe, it, type TestContext } from 'node:test';
import { openMemoryLog } from '../../src/log/memory/memory-log.ts';
import { openRunQueueOnLog } from '../../src/queue/open-run-queue.ts';

const START = 1_700_000_000_000;

async function queueAt(t: TestContext) {
  const clock = { nowMs: START };
  const queue = await openRunQueueOnLog(await openMemoryLog({ partitions: 2 }), { clock: () => clock.nowMs });
  t.after(() => queue.stop());
  return { queue, clock };
}

describe('overdue sweep', () => {
  it('expires an entry a lease holds but never started, once its start deadline passed', async (t) => {
    const { queue, clock } = await queueAt(t);
    const ticket = await queue.submit({ tenant: 'acme', thread: 't1', agent: 'build', input: 'x', deadline: START + 100 });
    const taken = (await queue.take({ agents: ['build'], holder: 'w', ttlMs: 10_000 }))!;
    assert.equal(taken.entry.entryId, ticket.entryId);
    clock.nowMs = START + 200; // the deadline passed; the lease still holds
    assert.equal(await queue.expireOverdue(), 1);
    const entry = await queue.entry('acme', ticket.entryId);
    assert.equal(entry.outcome, 'expired');
    assert.deepEqual(entry.attempts, []);
    await assert.rejects(queue.startAttempt(taken.lease, 'run-1'), { code: 'EntryClosed' });
  });

  it('expires it even when the sweep first ran while the lease held it and the lease then lapsed unstarted', async (t) => {
    const { queue, clock } = await queueAt(t);
    const ticket = await queue.submit({ tenant: 'acme', thread: 't1', agent: 'build', input: 'x', deadline: START + 100 });
    await queue.take({ agents: ['build'], holder: 'w', ttlMs: 1_000 });
    clock.nowMs = START + 200;
    const first = await queue.expireOverdue();
    clock.nowMs = START + 2_000; // the lease expired: its holder never started the entry
    const second = await queue.expireOverdue();
    assert.equal(first + second, 1, 'the entry was never swept');
    assert.equal((await queue.entry('acme', ticket.entryId)).outcome, 'expired');
    assert.equal((await queue.metrics()).open, 0);
  });
});
