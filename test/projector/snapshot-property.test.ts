/**
 * Snapshots against replay, on a real file log: for random schedules of submits (keys,
 * priorities, delays, deadlines), takes, attempts, closes, retries, defers, cancels, thread
 * deletions, prunes and compactions, with snapshots taken at random points, every snapshot
 * that is not stale, caught up with the log's tail, equals the replay from offset zero and the
 * live view (the canonical dump, and the metrics); every snapshot a later compaction made
 * stale is refused as stale. Pruned tickets read TicketExpired on a queue reopened from the
 * latest snapshot as on one replayed from zero.
 */
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import fc from 'fast-check';
import { encodeCommand } from '../../src/events/command-codec.ts';
import type { RunlogCommand } from '../../src/events/command-types.ts';
import { decodeSnapshot } from '../../src/events/snapshot-codec.ts';
import { partitionOf } from '../../src/log/partitioner.ts';
import type { PartitionView } from '../../projections/partition-view.ts';
import { openFileLog } from '../../src/log/file/file-log.ts';
import { catchUp, replayPartition } from '../../src/projector/replay.ts';
import { saveSnapshot, snapshotView } from '../../src/projector/snapshots.ts';
import { OPEN_STRETCH, STRETCH_ENTRIES } from '../../projections/open-threads-writing.ts';
import { openRunQueueOnLog } from '../../src/queue/open-run-queue.ts';
import type { RunQueue } from '../../src/queue/run-queue.ts';
import type { RunlogWarning } from '../../src/warnings.ts';
import { FakeClock } from '../contract/fixtures.ts';
import { scratchDir } from '../support/cleanup.ts';
import { snapshotView as canonical } from '../support/snapshot-view.ts';

const PARTITIONS = 2;
const THREADS = 4;

const step = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('submit' as const),
      thread: fc.nat(THREADS - 1),
      key: fc.option(fc.nat(3)),
      priority: fc.nat(2),
      delay: fc.option(fc.nat(50)),
      deadline: fc.option(fc.integer({ min: 1, max: 200 })),
    }),
  },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('take' as const), start: fc.boolean() }) },
  {
    weight: 3,
    arbitrary: fc.record({ kind: fc.constant('finish' as const), how: fc.constantFrom('succeeded', 'failed', 'retry', 'defer') }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('cancel' as const), target: fc.nat(20) }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('command' as const),
      request: fc.nat(5),
      thread: fc.nat(THREADS - 1),
      cancel: fc.option(fc.nat(20)),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('deleteThread' as const), thread: fc.nat(THREADS - 1) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('prune' as const), advance: fc.nat(300), limit: fc.integer({ min: 1, max: 4 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('expire' as const), advance: fc.nat(300) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('compact' as const), partition: fc.nat(PARTITIONS - 1) }) },
  {
    weight: 2,
    // during: how many of the next steps run while the snapshot's open entries are written (0: none, the snapshot awaited first).
    arbitrary: fc.record({ kind: fc.constant('snapshot' as const), partition: fc.nat(PARTITIONS - 1), during: fc.nat(5) }),
  },
);
type Step = typeof step extends fc.Arbitrary<infer S> ? S : never;

const submitCommandFields = {
  type: 'SubmitCommand',
  agent: 'build',
  input: new TextEncoder().encode('commanded work'),
  key: null,
  strategy: null,
  priority: null,
  notBefore: null,
  deadline: null,
  maxAttempts: null,
  metadata: {},
} as const;

/** What the canonical dump leaves out but a restored view must keep: each entry's last lease epoch (the next lease's is one more). */
function epochs(view: PartitionView): Array<[string, number]> {
  return [...view.entries.values()].map((entry): [string, number] => [entry.entryId, entry.lastEpoch]).sort();
}

interface Taken {
  lease: Parameters<RunQueue['close']>[0];
}

interface Saved {
  partition: number;
  bytes: Uint8Array;
}

/** Runs one schedule on a fresh queue; answers the snapshots it took. */
async function runSchedule(queue: RunQueue, clock: FakeClock, steps: Step[]): Promise<Saved[]> {
  const saved: Saved[] = [];
  const leases: Taken[] = [];
  const ids: string[] = [];
  const schedule = [...steps]; // a snapshot's steps run during it are taken out
  const run = async (s: Step, index: number): Promise<void> => {
    clock.advance(7);
    switch (s.kind) {
      case 'submit': {
        const request = {
          tenant: 'acme',
          thread: `t${s.thread}`,
          agent: 'build',
          input: `work ${ids.length}`,
          priority: s.priority,
          ...(s.key === null ? {} : { key: `k${s.key}` }),
          ...(s.delay === null ? {} : { notBefore: clock.nowMs + s.delay }),
          ...(s.deadline === null ? {} : { deadline: clock.nowMs + s.deadline }),
        };
        const ticket = await queue.submit(request).catch(() => null);
        if (ticket !== null) ids.push(ticket.entryId);
        break;
      }
      case 'take': {
        const taken = await queue.take({ agents: ['build'], holder: 'w', ttlMs: 100 });
        if (taken === null) break;
        if (s.start) await queue.startAttempt(taken.lease, `run-${ids.length}-${leases.length}`).catch(() => null);
        leases.push(taken);
        break;
      }
      case 'finish': {
        const taken = leases.shift();
        if (taken === undefined) break;
        if (s.how === 'retry' || s.how === 'defer') {
          const request = s.how === 'retry' ? ({ kind: 'retry', error: 'boom', delayMs: 20 } as const) : ({ kind: 'defer' } as const);
          await queue.yield(taken.lease, request).catch(() => null);
        } else {
          await queue
            .close(taken.lease, { status: s.how, ...(s.how === 'failed' ? { error: 'bad' } : { result: 'ok' }) })
            .catch(() => null);
        }
        break;
      }
      case 'cancel':
        if (ids.length > 0) await queue.cancel('acme', ids[s.target % ids.length]!, 'no longer wanted').catch(() => null);
        break;
      case 'command': {
        // A request of the commands topic (a submit, or a cancel of a known or forged ticket): its answer is kept in the view.
        const thread = `t${s.thread}`;
        const requestId = `r${s.request}`;
        const command: RunlogCommand =
          s.cancel === null
            ? { ...submitCommandFields, requestId, tenant: 'acme', thread }
            : {
                type: 'CancelCommand',
                requestId,
                tenant: 'acme',
                thread,
                entryId: ids[s.cancel % Math.max(1, ids.length)] ?? '0-1',
                reason: null,
              };
        await queue.answerCommand(partitionOf('acme', thread, PARTITIONS), encodeCommand(command));
        break;
      }
      case 'deleteThread':
        await queue.deleteThread('acme', `t${s.thread}`);
        break;
      case 'prune':
        clock.advance(s.advance);
        await queue.prune(100, s.limit);
        break;
      case 'expire':
        clock.advance(s.advance);
        await queue.expireOverdue();
        break;
      case 'compact':
        await queue.log.compact(s.partition);
        break;
      case 'snapshot': {
        const view = queue.views()[s.partition]!;
        if (s.during === 0)
          await saveSnapshot(queue.log, view); // nothing is in flight between steps
        else {
          // Nothing in flight as it starts; its open entries written one a turn while the next steps run.
          OPEN_STRETCH.entries = 1;
          const taking = saveSnapshot(queue.log, view);
          for (const next of schedule.splice(index + 1, s.during)) if (next.kind !== 'snapshot') await run(next, index);
          await taking;
          OPEN_STRETCH.entries = STRETCH_ENTRIES;
        }
        const [latest] = await queue.log.snapshots!.list(s.partition);
        saved.push({ partition: s.partition, bytes: new Uint8Array(await latest!.read()) });
        break;
      }
    }
  };
  for (let i = 0; i < schedule.length; i++) await run(schedule[i]!, i);
  return saved;
}

async function openQueue(t: TestContext, dir: string, clock: FakeClock, warnings: RunlogWarning[] = []): Promise<RunQueue> {
  const log = await openFileLog({ dir, partitions: PARTITIONS, fsync: false });
  const queue = await openRunQueueOnLog(log, { clock: clock.read, onWarning: (w) => warnings.push(w), snapshots: false });
  t.after(() => queue.stop());
  return queue;
}

test('property: every snapshot that is not stale, caught up with the tail, equals the replay from zero and the live view; stale ones are refused', async (t) => {
  let checked = 0;
  let stale = 0;
  let answers = 0;
  const keptBefore = OPEN_STRETCH.kept;
  await fc.assert(
    fc.asyncProperty(fc.array(step, { minLength: 5, maxLength: 40 }), async (steps) => {
      const dir = await scratchDir(t, 'runlog-snapshot-property-');
      const clock = new FakeClock();
      const queue = await openQueue(t, dir, clock);
      const saved = await runSchedule(queue, clock, steps);
      for (const { partition, bytes } of saved) {
        const stored = { name: `snapshot of partition ${partition}`, read: async () => bytes };
        const live = queue.views()[partition]!;
        const view = await snapshotView(queue.log, partition, stored).catch((error: Error) => error);
        if (view instanceof Error) {
          assert.match(view.message, /stale: a compaction ran up to offset/);
          assert.ok(decodeSnapshot(bytes).nextOffset < live.nextOffset);
          stale++;
          continue;
        }
        await catchUp(queue.log, partition, view);
        const replayed = await replayPartition(queue.log, partition);
        assert.deepEqual(canonical(view), canonical(replayed), 'snapshot + tail equals the replay from zero');
        assert.deepEqual(canonical(view), canonical(live), 'and the live view');
        assert.deepEqual({ ...view.metrics }, { ...live.metrics }, 'with the live metrics');
        assert.deepEqual(epochs(view), epochs(live), 'and the lease epochs');
        answers += view.answers.size;
        assert.equal(view.lastAt, live.lastAt);
        assert.equal(view.nextOffset, live.nextOffset);
        checked++;
      }
      await queue.stop();
    }),
    { numRuns: 40 },
  );
  t.diagnostic(
    `${checked} snapshots checked against replay (holding ${answers} answers), ${stale} refused as stale; ${OPEN_STRETCH.kept - keptBefore} open entries kept as they were while a snapshot was written`,
  );
  assert.ok(checked > 0 && answers > 0 && stale > 0);
});

test('a snapshot whose open entries are written while the queue takes, starts, closes, yields, cancels and submits: caught up, it equals the replay from zero and the live view', async (t) => {
  const dir = await scratchDir(t, 'runlog-snapshot-during-');
  const clock = new FakeClock();
  const queue = await openQueue(t, dir, clock);
  const submit = (i: number) => queue.submit({ tenant: 'acme', thread: `t${i % 10}`, agent: 'build', input: `work ${i}` });
  const ids = [];
  for (let i = 0; i < 40; i++) ids.push((await submit(i)).entryId);
  const leases = [];
  for (let i = 0; i < 8; i++) leases.push((await queue.take({ agents: ['build'], holder: 'w', ttlMs: 60_000 }))!.lease);
  for (const lease of leases.slice(0, 4)) await queue.startAttempt(lease, `run-${lease.entryId}`);
  const partition = partitionOf('acme', 't0', PARTITIONS);
  const view = queue.views()[partition]!;
  const keptBefore = OPEN_STRETCH.kept;
  OPEN_STRETCH.entries = 1;
  let taking: Promise<number>;
  try {
    taking = saveSnapshot(queue.log, view);
  } finally {
    OPEN_STRETCH.entries = STRETCH_ENTRIES; // the writing took its stretch as it began
  }
  // Meanwhile, one command at a time: each takes a turn or more, the snapshot one entry a turn.
  for (const lease of leases.slice(0, 3)) await queue.close(lease, { status: 'succeeded', result: 'ok' });
  for (const lease of leases.slice(3, 6)) await queue.yield(lease, { kind: 'retry', error: 'again', delayMs: 5 });
  for (let i = 0; i < 6; i++) await queue.take({ agents: ['build'], holder: 'w2', ttlMs: 60_000 });
  for (const entryId of ids.slice(30, 34)) await queue.cancel('acme', entryId);
  await queue.deleteThread('acme', 't9');
  for (let i = 40; i < 46; i++) await submit(i);
  await taking;
  assert.ok(OPEN_STRETCH.kept > keptBefore, 'entries were changed before their turn came');

  const [latest] = await queue.log.snapshots!.list(partition);
  const restored = await snapshotView(queue.log, partition, latest!);
  assert.ok(restored.nextOffset < view.nextOffset, 'the snapshot covers less than the live view');
  await catchUp(queue.log, partition, restored);
  const replayed = await replayPartition(queue.log, partition);
  assert.deepEqual(canonical(restored), canonical(replayed), 'snapshot + tail equals the replay from zero');
  assert.deepEqual(canonical(restored), canonical(view), 'and the live view');
  assert.deepEqual(epochs(restored), epochs(view), 'and the lease epochs');
});
