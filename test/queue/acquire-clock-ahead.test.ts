/**
 * A node that acquires a partition stamped by a node whose clock ran ahead raises its store
 * clock past that partition's times (store-clock.ts raiseTo: times never decrease on a
 * partition). That jump must not cut short the leases it granted on its other partitions: a
 * lease lasts its real length whatever the clocks did (store-clock.ts rule 3), or a second
 * worker takes an entry whose first worker is still running it.
 *
 * KNOWN, NOT FIXED (todo): the queue has one store clock for all its partitions, so raising it
 * for one partition moves every lease's expiry closer by the jump. A fix needs time kept per
 * partition (or leases judged by the monotonic clock of the node that granted them); see the
 * hostile tester's report of session 6. The test fails today; `todo` keeps it out of the count
 * until it is fixed, then it passes as it stands.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isRunlogError } from '../../src/errors.ts';
import { openFileLog } from '../../src/log/file/file-log.ts';
import { partitionOf } from '../../src/log/partitioner.ts';
import { openRunQueue, openRunQueueOnLog } from '../../src/queue/open-run-queue.ts';
import type { RunlogWarning } from '../../src/warnings.ts';
import { FakeClock, submitOf } from '../contract/fixtures.ts';
import { onCleanup, scratchDir } from '../support/cleanup.ts';

const PARTITIONS = 2;

function threadOn(partition: number): string {
  for (let i = 0; ; i++) if (partitionOf('acme', `t${i}`, PARTITIONS) === partition) return `t${i}`;
}

describe('acquiring a partition stamped by a node whose clock ran ahead', () => {
  it(
    'leaves the leases granted on the other partitions their real length',
    { todo: 'one store clock per queue: raising it for an acquired partition expires the other partitions’ leases early' },
    async (t) => {
      const dir = await scratchDir(t, 'runlog-acquire-clock-ahead');
      const ahead = new FakeClock(1_700_000_000_000 + 3_600_000); // the other node's clock: an hour ahead
      const other = await openRunQueue({ log: { kind: 'file', dir }, partitions: PARTITIONS, clock: ahead.read });
      await other.submit({ ...submitOf('acme', threadOn(0)), agent: 'elsewhere' });
      await other.stop();

      const clock = new FakeClock();
      const warnings: RunlogWarning[] = [];
      const log = await openFileLog({ dir, partitions: PARTITIONS });
      const queue = await openRunQueueOnLog(log, { clock: clock.read, ownership: 'assigned', onWarning: (w) => warnings.push(w) });
      onCleanup(t, () => queue.stop());
      await queue.acquire(1);
      await queue.submit(submitOf('acme', threadOn(1)));
      const taken = await queue.take({ agents: ['build'], holder: 'worker-1', ttlMs: 60_000 });
      assert.ok(taken !== null);

      await queue.acquire(0); // no time passes on this node's clocks
      assert.ok(warnings.some((w) => w.code === 'RUNLOG_CLOCK_STEP'));
      const second = await queue.take({ agents: ['build'], holder: 'worker-2', ttlMs: 60_000 });
      assert.equal(second?.entry.entryId, undefined, `worker-2 took ${second?.entry.entryId}, leased to worker-1 no time ago`);
      const extended = await queue.extend(taken.lease, 60_000).catch((error: unknown) => error);
      assert.ok(!isRunlogError(extended), `worker-1's lease, granted no time ago, is gone: ${String(extended)}`);
    },
  );
});
