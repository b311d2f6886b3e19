import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isRunlogError } from '../../src/errors.ts';
import { partitionOf } from '../../src/log/partitioner.ts';
import { runProjection } from '../../src/projector/run-projection.ts';
import { entryTimeline, threadTimeline } from '../../projections/timeline.ts';
import { scenario } from './scenario.ts';

const A_EVENTS = ['Submitted', 'Leased', 'AttemptStarted', 'Yielded', 'Leased', 'AttemptStarted', 'Closed'];
const A_GAPS = [null, 1_000, 0, 2_000, 500, 0, 4_000];

describe('timelines', () => {
  it("a thread's timeline: its events in log order, with where they lie and the time between them", async (t) => {
    const { log, t0, a } = await scenario(t);
    const partition = partitionOf('acme', 'order-1', log.partitions);
    const { state } = await runProjection(log, threadTimeline({ tenant: 'acme', thread: 'order-1' }), { partitions: [partition] });
    assert.deepEqual(
      state.map((item) => item.event.type),
      A_EVENTS,
    );
    assert.deepEqual(
      state.map((item) => item.sincePreviousMs),
      A_GAPS,
    );
    assert.ok(state.every((item) => item.partition === partition && item.event.entryId === a));
    assert.deepEqual(
      state.map((item) => item.offset),
      [...state.map((item) => item.offset)].sort((x, y) => (x < y ? -1 : 1)),
    );
    assert.equal(state[0]!.at, t0);
  });

  it("an entry's timeline, of its tenant only when one is named", async (t) => {
    const { log, a } = await scenario(t);
    const partitions = [Number(a.split('-')[0])];
    const mine = await runProjection(log, entryTimeline({ entryId: a, tenant: 'acme' }), { partitions });
    assert.deepEqual(
      mine.state.map((item) => item.event.type),
      A_EVENTS,
    );
    assert.deepEqual((await runProjection(log, entryTimeline({ entryId: a, tenant: 'globex' }), { partitions })).state, []);
  });

  it('bad options are InvalidArgument', () => {
    for (const make of [
      () => threadTimeline({ tenant: '', thread: 'x' }),
      () => threadTimeline({ tenant: 'acme' } as never),
      () => threadTimeline({ tenant: 'acme', thread: 'x', name: 'no spaces' }),
      () => entryTimeline({ entryId: 7 } as never),
      () => entryTimeline({ entryId: 'x', colour: 'red' } as never),
    ]) {
      assert.throws(make, (error: unknown) => isRunlogError(error, 'InvalidArgument'));
    }
  });
});
