/**
 * Projections on a Kafka log (the real broker): a shipped projection over what a RunQueue
 * wrote, checkpointed in `<topic>.projections` and resumed by a fresh store (a restart),
 * following the tail until aborted, and the queue's view through the API equal to the live one.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { runProjection } from '../../src/projector/run-projection.ts';
import { checkpointsTopicOf, kafkaCheckpoints } from '../../src/projector/kafka-checkpoints.ts';
import { openCheckpoints } from '../../src/projector/open-checkpoints.ts';
import { tenantUsage, tenantUsageRows } from '../../projections/tenant-usage.ts';
import { entryTimeline } from '../../projections/timeline.ts';
import { queueViewProjection } from '../../projections/queue-view.ts';
import { onCleanup } from '../support/cleanup.ts';
import { snapshotView } from '../support/snapshot-view.ts';
import { deleteTopic, kafkaBrokers, openTestKafkaLog, uniqueTopic } from '../log/kafka-test-support.ts';
import { scenario } from '../projections/scenario.ts';

describe('projections on Kafka', () => {
  it('fold, checkpoint in <topic>.projections, resume after a restart, follow the tail, and build the queue view', async (t) => {
    const topic = uniqueTopic('runlog-projector');
    onCleanup(t, () => deleteTopic(checkpointsTopicOf(topic)));
    const log = await openTestKafkaLog(t, 3, { topic });
    const { queue, a } = await scenario(t, log);
    const expected = [
      { tenant: 'acme', entries: 2, attempts: 2, runMs: 6_000, closed: 2 },
      { tenant: 'globex', entries: 1, attempts: 1, runMs: 250, closed: 1 },
    ];
    const whole = await runProjection(log, tenantUsage);
    assert.deepEqual(tenantUsageRows(whole.state), expected);

    // A run stopped halfway, then a restart with a fresh store: it resumes and ends equal.
    const ends = await Promise.all([0, 1, 2].map((p) => log.endOffset(p)));
    const first = await kafkaCheckpoints({ brokers: kafkaBrokers(), topic });
    const half = await runProjection(log, tenantUsage, { checkpoints: first, until: { offset: ends.map((end) => end / 2n) } });
    assert.equal(half.caughtUp, true);
    await first.close();
    const second = await openCheckpoints({ kind: 'kafka', brokers: kafkaBrokers(), topic });
    onCleanup(t, () => second.close());
    const resumed = await runProjection(log, tenantUsage, { checkpoints: second });
    assert.deepEqual([resumed.resumed, tenantUsageRows(resumed.state)], [true, expected]);
    assert.equal(half.folded + resumed.folded, whole.folded, 'each record folded once across the two runs');

    // Following: a new submission arrives while the run waits on the tail.
    const stop = new AbortController();
    let submitted = false;
    const followed = runProjection(log, tenantUsage, {
      checkpoints: second,
      follow: stop.signal,
      onUpdate: ({ state, caughtUp }) => {
        if (caughtUp && state.tenants.get('initech') === undefined && !submitted) {
          submitted = true;
          void queue.submit({ tenant: 'initech', thread: 'x', agent: 'billing', input: '{}' });
        }
        if (state.tenants.get('initech')?.entries === 1) stop.abort();
      },
    });
    const after = await followed;
    assert.deepEqual(
      tenantUsageRows(after.state).map((row) => [row.tenant, row.entries]),
      [
        ['acme', 2],
        ['globex', 1],
        ['initech', 1],
      ],
    );

    const partition = Number(a.split('-')[0]);
    const timeline = await runProjection(log, entryTimeline({ entryId: a }), { partitions: [partition] });
    assert.deepEqual(
      timeline.state.map((item) => item.event.type),
      ['Submitted', 'Leased', 'AttemptStarted', 'Yielded', 'Leased', 'AttemptStarted', 'Closed'],
    );
    for (const view of queue.views()) {
      const built = await runProjection(log, queueViewProjection(view.partition), { partitions: [view.partition] });
      assert.deepEqual(snapshotView(built.state), snapshotView(view));
    }
  });
});
