/** A RunQueue on Kafka across restarts and broker compaction, against the real broker. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { openKafkaLog } from '../../src/log/kafka/kafka-log.ts';
import { openRunQueueOnLog } from '../../src/queue/open-run-queue.ts';
import { snapshotView } from '../support/snapshot-view.ts';
import { replayPartition } from '../../src/projector/replay.ts';
import { FakeClock, submitOf } from '../contract/fixtures.ts';
import { deleteTopic, kafkaBrokers, uniqueTopic } from '../log/kafka-test-support.ts';

const TTL = 10_000;

async function queueOnTopic(topic: string, clock: FakeClock, topicConfig: Record<string, string> = {}) {
  const log = await openKafkaLog({ brokers: kafkaBrokers(), topic, partitions: 2, topicConfig });
  return openRunQueueOnLog(log, { clock: clock.read });
}

describe('RunQueue on Kafka: restart and compaction', () => {
  it('a new RunQueue on the same topic replays the same view; a lease taken before is takeable once it expires', async (t) => {
    const topic = uniqueTopic();
    t.after(() => deleteTopic(topic));
    const clock = new FakeClock();
    const first = await queueOnTopic(topic, clock);
    const a = await first.submit(submitOf('acme', 'a'));
    const b = await first.submit(submitOf('acme', 'b'));
    const leased = (await first.take({ agents: ['build'], holder: 'before', ttlMs: TTL }))!;
    assert.equal(leased.lease.entryId, a.entryId);
    await first.startAttempt(leased.lease, 'run-before');
    const before = first.views().map(snapshotView);
    await first.stop();

    const second = await queueOnTopic(topic, clock);
    t.after(() => second.stop());
    assert.deepEqual(second.views().map(snapshotView), before);
    const other = (await second.take({ agents: ['build'], holder: 'after', ttlMs: TTL }))!;
    assert.equal(other.lease.entryId, b.entryId);
    assert.equal(await second.take({ agents: ['build'], holder: 'after', ttlMs: TTL }), null);
    clock.advance(TTL);
    const retaken = (await second.take({ agents: ['build'], holder: 'after', ttlMs: TTL }))!;
    assert.equal(retaken.lease.entryId, a.entryId);
    assert.equal(retaken.lease.epoch, 2);
    await assert.rejects(second.close(leased.lease, { status: 'succeeded' }), { code: 'LeaseNotCurrent' });
  });

  it('after prune and broker compaction, a fresh replay gives the live view minus the pruned entries', async (t) => {
    const topic = uniqueTopic();
    t.after(() => deleteTopic(topic));
    const clock = new FakeClock();
    const compactFast = {
      'segment.ms': '100',
      'min.cleanable.dirty.ratio': '0.01',
      'delete.retention.ms': '100',
      'min.compaction.lag.ms': '0',
    };
    const queue = await queueOnTopic(topic, clock, compactFast);
    t.after(() => queue.stop());
    const pruned: string[] = [];
    for (let i = 0; i < 6; i++) {
      const ticket = await queue.submit(submitOf('acme', `t${i}`));
      const taken = (await queue.take({ agents: ['build'], holder: 'w', ttlMs: TTL }))!;
      await queue.startAttempt(taken.lease, `run-${i}`);
      await queue.extend(taken.lease, TTL);
      await queue.close(taken.lease, { status: 'succeeded' });
      if (i < 4) pruned.push(ticket.entryId);
      clock.advance(10);
    }
    const open = await queue.submit(submitOf('acme', 'still-open'));
    clock.advance(1000);
    await queue.prune(1000 - 25, 4);
    const recordsBefore = await countRecords(queue);

    // Keep appending (rolling segments) until the cleaner has removed records, bounded.
    const deadline = Date.now() + 90_000;
    let records = recordsBefore;
    for (let i = 0; records >= recordsBefore && Date.now() < deadline; i++) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      await queue.submit(submitOf('acme', `filler-${i % 2}`, { key: `k${i}` }));
      records = await countRecords(queue);
    }
    assert.ok(records < recordsBefore, `the broker compacted nothing within 90 s (${records} records)`);

    const live = queue.views().map(snapshotView);
    const replayed = await Promise.all(queue.views().map((view) => replayPartition(queue.log, view.partition)));
    assert.deepEqual(replayed.map(snapshotView), live);
    for (const entryId of pruned) await assert.rejects(queue.entry('acme', entryId), { code: 'TicketExpired' });
    assert.equal((await queue.entry('acme', open.entryId)).status, 'open');
  });
});

async function countRecords(queue: {
  log: { partitions: number; read(p: number, from: bigint): AsyncIterable<unknown> };
}): Promise<number> {
  let count = 0;
  for (let p = 0; p < queue.log.partitions; p++) for await (const _ of queue.log.read(p, 0n)) count++;
  return count;
}
