/**
 * A node that acquires a partition stamped by a node whose clock ran ahead starts that
 * partition's time at its latest event (times never decrease on a partition), as a lead of its
 * own over the store clock (partition-lead.ts). That must not cut short the leases it granted
 * on its other partitions: a lease lasts its real length whatever the clocks did
 * (store-clock.ts rule 3), or a second worker takes an entry whose first worker is still
 * running it. (Until session 8 the queue raised its one store clock instead, and this failed.)
 */
import assert from 'node:assert/strict';
import { describe, it, type TestContext } from 'node:test';
import { isRunlogError } from '../../src/errors.ts';
import type { SubmitCommand } from '../../src/events/command-types.ts';
import type { RunQueue } from '../../src/queue/run-queue.ts';
import { submitOf } from '../contract/fixtures.ts';
import { acquiredAhead, HOUR, threadOn } from '../support/acquired-ahead.ts';

/**
 * The lead shrinks at 500 ppm (partition-lead.ts), so durations judged on the acquired
 * partition last up to 0.05% longer than real: 15 ms more over 30 s, and a ms of rounding (never shorter).
 */
const SLEWED_30S = 16;

/** As acquiredAhead, with an entry of partition 1 leased to worker-1 before partition 0 is acquired. */
async function leasedBeforeAcquire(t: TestContext) {
  const leaseOnPartition1 = async (queue: RunQueue) => {
    await queue.submit(submitOf('acme', threadOn(1)));
    const taken = await queue.take({ agents: ['build'], holder: 'worker-1', ttlMs: 60_000 });
    assert.ok(taken !== null);
    return taken;
  };
  const { before: taken, ...rest } = await acquiredAhead(t, HOUR, leaseOnPartition1);
  return { ...rest, taken };
}

describe('acquiring a partition stamped by a node whose clock ran ahead', () => {
  it('leaves the leases granted on the other partitions their real length', async (t) => {
    const { queue, warnings, taken } = await leasedBeforeAcquire(t);
    assert.ok(warnings.some((w) => w.code === 'RUNLOG_CLOCK_STEP' && w.message.includes('partition 0')));
    const second = await queue.take({ agents: ['build'], holder: 'worker-2', ttlMs: 60_000 });
    assert.equal(second?.entry.entryId, undefined, `worker-2 took ${second?.entry.entryId}, leased to worker-1 no time ago`);
    const extended = await queue.extend(taken.lease, 60_000).catch((error: unknown) => error);
    assert.ok(!isRunlogError(extended), `worker-1's lease, granted no time ago, is gone: ${String(extended)}`);
  });

  it("stamps the acquired partition's events no earlier than its latest, and its leases last their real length there too", async (t) => {
    const { queue, clock, aheadAt } = await leasedBeforeAcquire(t);
    const ticket = await queue.submit({ ...submitOf('acme', threadOn(0, 1)), agent: 'here' });
    assert.ok((await queue.entry('acme', ticket.entryId)).submittedAt >= aheadAt, 'a time on partition 0 went back');
    const first = await queue.take({ agents: ['here'], holder: 'worker-1', ttlMs: 60_000 });
    assert.equal(first?.entry.entryId, ticket.entryId);
    clock.advance(59_000);
    assert.equal(await queue.take({ agents: ['here'], holder: 'worker-2', ttlMs: 60_000 }), null, 'taken before the lease ran out');
    clock.advance(2_000);
    const again = await queue.take({ agents: ['here'], holder: 'worker-2', ttlMs: 60_000 });
    assert.equal(again?.entry.entryId, ticket.entryId, 'the lease did not run out after its real length');
  });

  it("a caller's notBefore (by its wall clock) waits its real time on the acquired partition, and nextDueAt says when in store time", async (t) => {
    const { queue, clock } = await leasedBeforeAcquire(t);
    await queue.submit({ ...submitOf('acme', threadOn(0, 1)), agent: 'later', notBefore: clock.nowMs + 30_000 });
    assert.equal(await queue.take({ agents: ['later'], holder: 'w', ttlMs: 1_000 }), null);
    assert.equal(await queue.nextDueAt(['later']), clock.nowMs + 30_000);
    clock.advance(29_000);
    assert.equal(await queue.take({ agents: ['later'], holder: 'w', ttlMs: 1_000 }), null, 'taken before its notBefore');
    clock.advance(1_000 + SLEWED_30S);
    assert.ok((await queue.take({ agents: ['later'], holder: 'w', ttlMs: 1_000 })) !== null, 'still waiting after 30 s');
  });

  it("prunes the acquired partition's closed entries after their real lifetime, not an hour early or late", async (t) => {
    const { queue, clock } = await leasedBeforeAcquire(t);
    await queue.submit({ ...submitOf('acme', threadOn(0, 1)), agent: 'here' });
    const taken = await queue.take({ agents: ['here'], holder: 'w', ttlMs: 60_000 });
    assert.ok(taken !== null);
    await queue.close(taken.lease, { status: 'succeeded' });
    clock.advance(9_000);
    assert.equal(await queue.prune(10_000, 10), 0, 'pruned before its lifetime');
    clock.advance(1_000 + SLEWED_30S);
    assert.equal(await queue.prune(10_000, 10), 1);
  });
});

describe('partitions in different times (a lead), compared', () => {
  it('a take across partitions takes the entry submitted first in real time, whichever partition runs ahead', async (t) => {
    const { queue, clock } = await acquiredAhead(t);
    const early = await queue.submit({ ...submitOf('acme', threadOn(0, 1)), agent: 'x' });
    clock.advance(10 * 60_000);
    await queue.submit({ ...submitOf('acme', threadOn(1)), agent: 'x' });
    const first = await queue.take({ agents: ['x'], holder: 'w', ttlMs: 60_000 });
    assert.equal(first?.entry.entryId, early.entryId, 'the entry submitted 10 minutes later, on the other partition, was taken first');
  });

  it("a caller's notBefore waits its real time even when nothing read the partition for hours (the lead as of now)", async (t) => {
    const { queue, clock } = await acquiredAhead(t);
    clock.advance(10 * HOUR); // the lead shrinks by 18 s meanwhile; nothing reads partition 0
    const notBefore = clock.nowMs + 1_000;
    const command: SubmitCommand = {
      type: 'SubmitCommand',
      requestId: 'r1',
      tenant: 'acme',
      thread: threadOn(0, 1),
      agent: 'later',
      input: new Uint8Array(),
      key: null,
      strategy: null,
      priority: null,
      maxAttempts: null,
      metadata: {},
      notBefore,
      deadline: null,
    };
    const answered = await queue.answerCommand(0, command);
    assert.ok(answered !== null);
    assert.ok(Math.abs((await queue.nextDueAt(['later']))! - notBefore) <= 1, 'nextDueAt is not the asked notBefore in store time');
    clock.advance(999 - SLEWED_30S);
    assert.equal(await queue.take({ agents: ['later'], holder: 'w', ttlMs: 1_000 }), null, 'taken before its notBefore');
    clock.advance(2 + SLEWED_30S);
    assert.ok((await queue.take({ agents: ['later'], holder: 'w', ttlMs: 1_000 })) !== null, 'a 1 s notBefore still waits');
  });
});

for (const aheadMs of [HOUR, 0]) {
  it(`a partition ${aheadMs === 0 ? 'in step' : 'acquired ahead'} released and acquired back, nothing written meanwhile, keeps its time: a lease granted before lasts its real length`, async (t) => {
    const { queue, clock } = await acquiredAhead(t, aheadMs);
    const ticket = await queue.submit({ ...submitOf('acme', threadOn(0, 1)), agent: 'x' });
    assert.equal((await queue.take({ agents: ['x'], holder: 'w1', ttlMs: 60_000 }))?.entry.entryId, ticket.entryId);
    await queue.release(0);
    clock.advance(30_000);
    await queue.acquire(0); // the same node gets it back 30 s later; nobody wrote meanwhile
    clock.advance(29_000);
    assert.equal(await queue.take({ agents: ['x'], holder: 'w2', ttlMs: 60_000 }), null, 'taken before the lease ran out');
    clock.advance(1_000 + SLEWED_30S * 2);
    const second = await queue.take({ agents: ['x'], holder: 'w2', ttlMs: 60_000 });
    assert.equal(second?.entry.entryId, ticket.entryId, 'the 60 s lease still held 60 s after it was granted');
  });
}
