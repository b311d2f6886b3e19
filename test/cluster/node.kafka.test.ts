/**
 * The cluster node in process, on the real broker with its real group membership: before it
 * has joined and once it has stopped it refuses every call (NotOwner, retriable) and is not
 * ready; joined alone, it owns and serves every partition, and its map says so; stopped, it
 * has released them all. A partition a stale writer fenced while the group still names the
 * node its owner is claimed back (else nobody would serve it until the next rebalance).
 */
import assert from 'node:assert/strict';
import { describe, it, type TestContext } from 'node:test';
import { isRunlogError } from '../../src/errors.ts';
import { ClusterNode } from '../../src/cluster/node.ts';
import { openKafkaLog } from '../../src/log/kafka/kafka-log.ts';
import { partitionOf } from '../../src/log/partitioner.ts';
import { openRunQueueOnLog } from '../../src/queue/open-run-queue.ts';
import { submitOf } from '../contract/fixtures.ts';
import { kafkaBrokers, openTestKafkaLog, uniqueTopic } from '../log/kafka-test-support.ts';
import { onCleanup } from '../support/cleanup.ts';

const PARTITIONS = 3;

/** A node (not started) over a queue with ownership 'assigned' on a fresh topic, its log lines recorded. */
async function nodeOnFreshTopic(t: TestContext) {
  const topic = uniqueTopic('runlog-node');
  const log = await openTestKafkaLog(t, PARTITIONS, { topic });
  const queue = await openRunQueueOnLog(log, { ownership: 'assigned' });
  onCleanup(t, () => queue.stop());
  const lines: { event: string; fields: Record<string, unknown> }[] = [];
  const node = new ClusterNode({
    queue,
    brokers: kafkaBrokers(),
    topic,
    group: `${topic}-nodes`,
    sessionTimeoutMs: 6_000,
    nodeId: 'node-1',
    logger: { log: (_level, event, fields = {}) => void lines.push({ event, fields }) },
  });
  onCleanup(t, () => node.stop());
  return { topic, queue, node, lines };
}

describe('a cluster node', () => {
  it('serves nothing before it joins and after it stops; joined alone it serves every partition', async (t) => {
    const { topic, queue, node, lines } = await nodeOnFreshTopic(t);
    const refusedWith = (why: RegExp) => (error: unknown) =>
      isRunlogError(error, 'NotOwner') && error.retriable && why.test(error.message) && error.owner === undefined;

    await assert.rejects(queue.submit(submitOf('acme', 'order-1')), refusedWith(/has not joined yet/));
    assert.equal(await node.ready(), false);
    assert.deepEqual(await node.describe(), {
      group: `${topic}-nodes`,
      generation: 0,
      partitions: PARTITIONS,
      self: { node: 'node-1', url: '' },
      members: [],
      owners: [null, null, null],
    });

    await node.start('http://127.0.0.1:1');
    const self = { node: 'node-1', url: 'http://127.0.0.1:1' };
    for (let i = 0; i < 100 && !(await node.ready()); i++) await new Promise((resolve) => setTimeout(resolve, 100));
    assert.equal(await node.ready(), true);
    const map = await node.describe();
    assert.ok(map.generation >= 1);
    assert.deepEqual([map.self, map.members, map.owners], [self, [self], Array(PARTITIONS).fill(self.url)]);
    const ticket = await queue.submit(submitOf('acme', 'order-1'));
    assert.equal((await queue.entry('acme', ticket.entryId)).entryId, ticket.entryId);
    const serving = lines.filter((line) => line.event === 'cluster.partition.serving').map((line) => line.fields.partition);
    assert.deepEqual(serving.sort(), [0, 1, 2]);
    assert.ok(lines.some((line) => line.event === 'cluster.assignment' && line.fields.generation === map.generation));

    await node.stop();
    await assert.rejects(queue.entry('acme', ticket.entryId), refusedWith(/is leaving/));
    assert.deepEqual(
      (await queue.health()).map((h) => h.mode),
      ['unowned', 'unowned', 'unowned'],
    );
    assert.equal(await node.ready(), false);
    assert.ok(lines.some((line) => line.event === 'cluster.left'));
  });

  it('acquires again a partition a stale writer fenced while the group still names it the owner', async (t) => {
    const { topic, queue, node, lines } = await nodeOnFreshTopic(t);
    await node.start('http://127.0.0.1:1');
    for (let i = 0; i < 100 && !(await node.ready()); i++) await new Promise((resolve) => setTimeout(resolve, 100));
    const thread = threadOn(0);
    const first = await queue.submit(submitOf('acme', thread));

    // A stale writer: another process's Kafka log claiming partition 0 (as a node that had not
    // yet learned it lost the partition would), fencing the node's writer. No rebalance follows.
    const stale = await openKafkaLog({ brokers: kafkaBrokers(), topic, partitions: PARTITIONS });
    onCleanup(t, () => stale.close());
    await stale.claim(0);
    await assert.rejects(queue.submit(submitOf('acme', thread)), (e: unknown) => isRunlogError(e) && e.retriable);
    const generation = (await node.describe()).generation;

    // Within about a session timeout the node claims it back and serves it, with what it held.
    let entries: string[] = [];
    for (let i = 0; i < 300; i++) {
      entries = await queue.openEntries('acme', thread).then(
        (open) => open.map((e) => e.entryId),
        () => [],
      );
      if (entries.length > 0) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assert.deepEqual(entries, [first.entryId]);
    assert.equal((await node.describe()).generation, generation, 'no rebalance brought it back');
    const reclaimed = lines.find((line) => line.event === 'cluster.partition.reclaimed');
    assert.equal(reclaimed?.fields.partition, 0);
    t.diagnostic(`partition 0 reclaimed after ${String(reclaimed?.fields.strayMs)} ms unserved`);
    await queue.submit(submitOf('acme', thread));
    await assert.rejects(stale.append(0, [{ key: 'x', value: null }]), (e: unknown) => isRunlogError(e, 'Fenced'));
  });
});

function threadOn(partition: number): string {
  for (let i = 0; ; i++) if (partitionOf('acme', `t${i}`, PARTITIONS) === partition) return `t${i}`;
}
