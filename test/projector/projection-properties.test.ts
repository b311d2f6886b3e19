/**
 * Properties of the projector (fast-check, on the memory log):
 *   - any split into runs, each stopped at random offsets (`until`) or by a fold that throws
 *     after a random number of records, checkpointing and resuming, equals one fold from zero;
 *   - `until` at an offset equals the fold of the prefix below it;
 *   - in time order, the fold sees the records merged by time, and runs split at random times
 *     equal one fold from zero.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { openMemoryLog } from '../../src/log/memory/memory-log.ts';
import { defineProjection, type Projection } from '../../projections/projection.ts';
import { runProjection } from '../../src/projector/run-projection.ts';
import { memoryCheckpoints } from '../../src/projector/checkpoint-store.ts';
import { tenantUsage } from '../../projections/tenant-usage.ts';
import { agentOutcomes } from '../../projections/agent-outcomes.ts';
import { failuresByError } from '../../projections/failures-by-error.ts';
import { appendRecords, lifecycleRecords, steps, type PlannedRecord } from './lifecycles.ts';

/**
 * Every record it is given, in order: `<partition>:<offset>:<type>` (a tombstone: `~<key>`);
 * `perPartition`: a list for each partition (the order 'partition' promises nothing across
 * partitions: a run stopped early on partition 0 goes on with partition 1 before the rest of 0).
 */
function trace(fuse = { left: Number.POSITIVE_INFINITY }, perPartition = false) {
  const note = (state: Map<number, string[]>, what: string, partition: number, offset: bigint): Map<number, string[]> => {
    if (fuse.left-- <= 0) throw new Error('the fold failed (a test fuse)');
    const key = perPartition ? partition : -1;
    state.set(key, [...(state.get(key) ?? []), `${partition}:${offset}:${what}`]);
    return state;
  };
  return defineProjection<Map<number, string[]>>({
    name: 'trace',
    initial: () => new Map(),
    evolve: (state, event, { partition, offset }) => note(state, `${event.type}@${event.at}`, partition, offset),
    tombstone: (state, key, { partition, offset }) => note(state, `~${key}`, partition, offset),
  });
}

async function logOf(records: readonly PlannedRecord[], partitions: number) {
  const log = await openMemoryLog({ partitions });
  await appendRecords(log, records);
  return log;
}

/** The records of each partition, with the offsets the memory log gave them (0, 1, 2, ...). */
function byPartition(records: readonly PlannedRecord[], partitions: number): { record: PlannedRecord; offset: bigint }[][] {
  const parts = Array.from({ length: partitions }, () => [] as { record: PlannedRecord; offset: bigint }[]);
  for (const record of records) parts[record.partition]!.push({ record, offset: BigInt(parts[record.partition]!.length) });
  return parts;
}

function describeRecord({ record, offset }: { record: PlannedRecord; offset: bigint }): string {
  const what = record.event === null ? `~${record.key}` : `${record.event.type}@${record.event.at}`;
  return `${record.partition}:${offset}:${what}`;
}

const run = {
  partitions: fc.integer({ min: 1, max: 3 }),
  splits: fc.array(fc.record({ cuts: fc.array(fc.nat(), { minLength: 3, maxLength: 3 }), crashAfter: fc.option(fc.nat(40)) }), {
    maxLength: 5,
  }),
  checkpointEvery: fc.integer({ min: 1, max: 30 }),
};

describe('projection properties', () => {
  it('the shipped projections, checkpointed and resumed at random offsets, equal one fold from zero', async () => {
    await fc.assert(
      fc.asyncProperty(steps(80), run.partitions, fc.array(fc.nat(), { minLength: 3, maxLength: 3 }), async (plan, partitions, cuts) => {
        const log = await logOf(lifecycleRecords(plan, partitions), partitions);
        const ends = await Promise.all([...Array(partitions).keys()].map((p) => log.endOffset(p)));
        const until = ends.map((end, p) => BigInt(cuts[p]!) % (end + 1n));
        const splitEqualsWhole = async <S>(projection: Projection<S>): Promise<void> => {
          const checkpoints = memoryCheckpoints();
          await runProjection(log, projection, { checkpoints, until: { offset: until } });
          const resumed = await runProjection(log, projection, { checkpoints });
          assert.deepEqual(resumed.state, (await runProjection(log, projection)).state, projection.name);
        };
        await splitEqualsWhole(tenantUsage);
        await splitEqualsWhole(agentOutcomes);
        await splitEqualsWhole(failuresByError);
      }),
      { numRuns: 40 },
    );
  });

  it('any split into runs (stopped at random offsets or by a failing fold, checkpointed, resumed) equals one fold from zero', async () => {
    await fc.assert(
      fc.asyncProperty(steps(), run.partitions, run.splits, run.checkpointEvery, async (plan, partitions, splits, checkpointEvery) => {
        const log = await logOf(lifecycleRecords(plan, partitions), partitions);
        const whole = await runProjection(log, trace(undefined, true));
        const ends = await Promise.all([...Array(partitions).keys()].map((p) => log.endOffset(p)));
        const checkpoints = memoryCheckpoints();
        const onWarning = (): void => {}; // a crashed run may have folded past the next run's until: that one starts over
        const reached = ends.map(() => 0n);
        for (const { cuts, crashAfter } of splits) {
          if (crashAfter !== null) {
            // The fold may also finish before the fuse burns: then it checkpointed everything.
            await runProjection(log, trace({ left: crashAfter }, true), { checkpoints, checkpointEvery, onWarning }).catch(
              (error: Error) => {
                if (!/a test fuse/.test(error.message)) throw error;
              },
            );
            continue;
          }
          // Cuts only move forward: a checkpoint past `until` is not resumed (another property).
          const until = ends.map((end, p) => (reached[p] = reached[p]! + (BigInt(cuts[p]!) % (end - reached[p]! + 1n))));
          const part = await runProjection(log, trace(undefined, true), {
            checkpoints,
            checkpointEvery,
            onWarning,
            until: { offset: until },
          });
          assert.deepEqual([...part.position.values()], until);
        }
        const last = await runProjection(log, trace(undefined, true), { checkpoints, checkpointEvery });
        assert.deepEqual(last.state, whole.state);
        assert.deepEqual(last.position, whole.position);
        if (splits.some(({ crashAfter }) => crashAfter === null)) assert.equal(last.resumed, true);
      }),
      { numRuns: 60 },
    );
  });

  it('until at an offset equals the fold of the prefix below it', async () => {
    await fc.assert(
      fc.asyncProperty(steps(), run.partitions, fc.array(fc.nat(), { minLength: 3, maxLength: 3 }), async (plan, partitions, cuts) => {
        const records = lifecycleRecords(plan, partitions);
        const log = await logOf(records, partitions);
        const parts = byPartition(records, partitions);
        const until = parts.map((part, p) => BigInt(cuts[p]! % (part.length + 2)));
        const prefix = parts.flatMap((part, p) => part.filter(({ offset }) => offset < until[p]!).map(describeRecord));
        const result = await runProjection(log, trace(), { until: { offset: until } });
        assert.deepEqual(result.state.get(-1) ?? [], prefix);
        assert.deepEqual(
          [...result.position.values()],
          parts.map((part, p) => (until[p]! < BigInt(part.length) ? until[p]! : BigInt(part.length))),
        );
      }),
      { numRuns: 80 },
    );
  });

  it('in time order, folds the partitions merged by time, and runs split at random times equal one fold', async () => {
    await fc.assert(
      fc.asyncProperty(steps(), run.partitions, fc.array(fc.nat(60_000), { maxLength: 4 }), async (plan, partitions, gaps) => {
        const records = lifecycleRecords(plan, partitions);
        const log = await logOf(records, partitions);
        const whole = await runProjection(log, trace(), { order: 'time' });
        assert.deepEqual(whole.state.get(-1) ?? [], mergedByTime(byPartition(records, partitions)));
        const checkpoints = memoryCheckpoints();
        let at = 1_767_225_600_000;
        for (const gap of gaps) {
          at += gap;
          await runProjection(log, trace(), { order: 'time', checkpoints, until: { at } });
        }
        const last = await runProjection(log, trace(), { order: 'time', checkpoints });
        assert.deepEqual(last.state, whole.state);
      }),
      { numRuns: 60 },
    );
  });
});

/** The model of the time order: by time (a tombstone has its partition's previous time), then partition, then offset. */
function mergedByTime(parts: { record: PlannedRecord; offset: bigint }[][]): string[] {
  const timed = parts.flatMap((part) => {
    let at = Number.NEGATIVE_INFINITY;
    return part.map((item) => {
      at = item.record.event === null ? at : Math.max(at, item.record.event.at);
      return { item, at };
    });
  });
  timed.sort((a, b) => a.at - b.at || a.item.record.partition - b.item.record.partition || Number(a.item.offset - b.item.offset));
  return timed.map(({ item }) => describeRecord(item));
}
