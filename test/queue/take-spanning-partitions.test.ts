/**
 * A take that spans partitions never leaves a lease behind that its caller did not get: an
 * overdue head on one partition is expired on the way to a takeable head on another; when
 * that expiry's append fails, the take still answers its own lease (the failed expiry is
 * its partition's, reported as RUNLOG_EXPIRE), and the overdue entry is expired later.
 * A real memory log, wrapped to fail one append.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { openMemoryLog } from '../../src/log/memory/memory-log.ts';
import { partitionOf } from '../../src/log/partitioner.ts';
import { openRunQueueOnLog } from '../../src/queue/open-run-queue.ts';
import type { Taken } from '../../src/queue/types.ts';
import type { RunlogWarning } from '../../src/warnings.ts';
import { assertReplayEqualsLive, FakeClock, submitOf } from '../contract/fixtures.ts';
import { FaultyLog } from './faulty-log.ts';

function threadOn(partition: number, count: number, tenant = 'acme'): string {
  for (let i = 0; ; i++) if (partitionOf(tenant, `t${i}`, count) === partition) return `t${i}`;
}

describe('a take across partitions', () => {
  it('whose expiry on another partition fails gets its lease, and leaves no lease it did not hand out', async (t) => {
    const faulty = new FaultyLog(await openMemoryLog({ partitions: 2 }));
    const clock = new FakeClock();
    const warnings: RunlogWarning[] = [];
    const queue = await openRunQueueOnLog(faulty.wrap(), { clock: clock.read, onWarning: (w) => void warnings.push(w) });
    t.after(() => queue.stop());
    // The overdue head sorts first (higher priority), so the take expires it before it leases the other.
    const overdue = await queue.submit(submitOf('acme', threadOn(0, 2), { priority: 5, deadline: clock.nowMs + 1_000 }));
    const takeable = await queue.submit(submitOf('acme', threadOn(1, 2)));
    clock.advance(2_000);
    faulty.failNextAppend = 0;

    const outcome = await queue.take({ agents: ['build'], holder: 'w', ttlMs: 60_000 }).then(
      (taken) => ({ taken }),
      (error: unknown) => ({ error }),
    );
    const stored = await queue.entry('acme', takeable.entryId);
    const taken: Taken | null = 'taken' in outcome ? outcome.taken : null;
    // The invariant: the caller got the lease, or no lease exists.
    assert.deepEqual(
      stored.lease,
      taken?.lease ?? null,
      `a lease the caller did not get (take answered ${String('error' in outcome ? outcome.error : 'null')})`,
    );
    assert.equal(taken?.entry.entryId, takeable.entryId, 'the take answers its own lease');
    assert.deepEqual(
      warnings
        .filter((w) => w.code === 'RUNLOG_EXPIRE')
        .map((w) => /injected append failure/.test(w.message) && w.message.includes(overdue.entryId)),
      [true],
      'the failed expiry is reported',
    );

    // Its partition rebuilt, the overdue entry is still open, and the next take expires it.
    assert.equal((await queue.entry('acme', overdue.entryId)).status, 'open');
    assert.equal(await queue.take({ agents: ['build'], holder: 'w', ttlMs: 60_000 }), null);
    assert.equal((await queue.entry('acme', overdue.entryId)).outcome, 'expired');
    await assertReplayEqualsLive(queue);
  });
});
