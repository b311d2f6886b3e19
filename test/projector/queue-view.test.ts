/**
 * The queue's own view built through the public projection API (queueViewProjection over
 * runProjection) equals the live view of a real RunQueue, for any schedule of submits, runs,
 * retries, closes, cancels and prunes, before and after compaction; and a run `until` the
 * offsets the log had at some moment equals the live view as it was at that moment.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { isRunlogError } from '../../src/errors.ts';
import { openMemoryLog } from '../../src/log/memory/memory-log.ts';
import { openRunQueueOnLog } from '../../src/queue/open-run-queue.ts';
import type { RunQueue } from '../../src/queue/run-queue.ts';
import { runProjection } from '../../src/projector/run-projection.ts';
import { memoryCheckpoints } from '../../src/projector/checkpoint-store.ts';
import { queueViewProjection } from '../../projections/queue-view.ts';
import { snapshotView, type ViewSnapshot } from '../support/snapshot-view.ts';
import { FakeClock } from '../contract/fixtures.ts';

const PARTITIONS = 2;

const step = fc.oneof(
  fc.record({ kind: fc.constant('submit' as const), thread: fc.nat(3), tenant: fc.nat(1) }),
  fc.record({
    kind: fc.constant('run' as const),
    end: fc.constantFrom('succeeded' as const, 'failed' as const, 'retry' as const, 'defer' as const),
  }),
  fc.record({ kind: fc.constant('cancel' as const), target: fc.nat(20) }),
  fc.record({ kind: fc.constant('prune' as const) }),
  fc.record({ kind: fc.constant('mark' as const) }),
);

async function projected(queue: RunQueue, until?: bigint): Promise<ViewSnapshot[]> {
  const views: ViewSnapshot[] = [];
  for (let p = 0; p < PARTITIONS; p++) {
    const options = until === undefined ? {} : { until: { offset: until } };
    views.push(snapshotView((await runProjection(queue.log, queueViewProjection(p), { partitions: [p], ...options })).state));
  }
  return views;
}

describe('the queue view as a projection', () => {
  it('equals the live view for any schedule (and at any earlier moment, with until)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { maxLength: 30 }), async (steps) => {
        const clock = new FakeClock();
        const queue = await openRunQueueOnLog(await openMemoryLog({ partitions: PARTITIONS }), { clock: clock.read });
        try {
          const ids: [string, string][] = [];
          const marks: { ends: bigint[]; views: ViewSnapshot[] }[] = [];
          for (const s of steps) {
            clock.advance(100);
            if (s.kind === 'submit') {
              const tenant = `tenant-${s.tenant}`;
              ids.push([tenant, (await queue.submit({ tenant, thread: `t${s.thread}`, agent: 'build', input: 'x' })).entryId]);
            } else if (s.kind === 'run') {
              const taken = await queue.take({ agents: ['build'], holder: 'w', ttlMs: 1_000 });
              if (taken === null) continue;
              await queue.startAttempt(taken.lease, `run-${clock.nowMs}`);
              clock.advance(50);
              if (s.end === 'retry') await queue.yield(taken.lease, { kind: 'retry', error: 'boom', delayMs: 0 });
              else if (s.end === 'defer') await queue.yield(taken.lease, { kind: 'defer' });
              else await queue.close(taken.lease, { status: s.end, ...(s.end === 'failed' ? { error: 'bad' } : {}) });
            } else if (s.kind === 'cancel' && ids.length > 0) {
              const [tenant, entryId] = ids[s.target % ids.length]!;
              await queue.cancel(tenant, entryId).catch((error: unknown) => {
                if (!isRunlogError(error)) throw error;
              });
            } else if (s.kind === 'prune') {
              await queue.prune(150, 3);
            } else if (s.kind === 'mark') {
              const ends = await Promise.all([...Array(PARTITIONS).keys()].map((p) => queue.log.endOffset(p)));
              marks.push({ ends, views: queue.views().map(snapshotView) });
            }
          }
          assert.deepEqual(await projected(queue), queue.views().map(snapshotView));
          for (const { ends, views } of marks) {
            for (let p = 0; p < PARTITIONS; p++) {
              const then = await runProjection(queue.log, queueViewProjection(p), { partitions: [p], until: { offset: ends[p]! } });
              assert.deepEqual(snapshotView(then.state), views[p]);
            }
          }
          for (let p = 0; p < PARTITIONS; p++) await queue.log.compact(p);
          assert.deepEqual(await projected(queue), queue.views().map(snapshotView));
        } finally {
          await queue.stop();
        }
      }),
      { numRuns: 40 },
    );
  });

  it('folds its own partition only, and is not checkpointed', async () => {
    const log = await openMemoryLog({ partitions: 2 });
    const queue = await openRunQueueOnLog(log, {});
    try {
      await queue.submit({ tenant: 'acme', thread: 't0', agent: 'build', input: 'x' });
      await queue.submit({ tenant: 'acme', thread: 't1', agent: 'build', input: 'x' });
      await assert.rejects(runProjection(log, queueViewProjection(0)), { code: 'InvalidArgument', message: /partitions: \[0\]/ });
      await assert.rejects(runProjection(log, queueViewProjection(0), { partitions: [0], checkpoints: memoryCheckpoints() }), {
        code: 'InvalidArgument',
        message: /not checkpointed/,
      });
      assert.throws(() => queueViewProjection(-1), { code: 'InvalidArgument' });
    } finally {
      await queue.stop();
    }
  });
});
