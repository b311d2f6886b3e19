/**
 * A cluster of `runlog serve --group` child processes on the real broker, one topic of six
 * partitions: ownership spreads (each node its share, every node's /v1/cluster the same map)
 * and a node started later takes its share; a node SIGKILLed under load is replaced (its
 * partitions serve again on the others: the time is measured and printed, not asserted); a
 * node paused (SIGSTOP) past its session timeout is taken over and, resumed, answers NotOwner
 * (its membership lapsed) until it has rejoined. In every case nothing a node acknowledged
 * is missing from the events topic, read at the end by a queue of its own.
 */
import assert from 'node:assert/strict';
import { describe, it, type TestContext } from 'node:test';
import { openRunQueue } from '../../src/queue/open-run-queue.ts';
import { deleteTopic, kafkaBrokers, uniqueTopic } from '../log/kafka-test-support.ts';
import { onCleanup } from '../support/cleanup.ts';
import {
  linesOf,
  PARTITIONS,
  shares,
  stableCluster,
  startNode,
  submitTo,
  Submitter,
  TENANT,
  threadOn,
  waitFor,
  type Acknowledged,
  type Node,
} from './cluster-nodes.ts';

/** A fresh topic and group, the topic deleted after the test (after its nodes are gone). */
function cluster(t: TestContext): { topic: string; group: string; start: () => Promise<Node> } {
  const topic = uniqueTopic('runlog-cluster');
  onCleanup(t, () => deleteTopic(topic));
  const group = `${topic}-nodes`;
  return { topic, group, start: () => startNode(t, topic, group) };
}

/** SIGTERM: the node leaves its group and stops cleanly (exit 0). */
async function stopNode(node: Node): Promise<void> {
  node.serve.child.kill('SIGTERM');
  assert.deepEqual(await node.serve.exited, { code: 0, signal: null }, node.serve.stderr());
}

/** Every acknowledged submission is in the topic: a queue of its own (opened once the nodes are gone) finds each entry. */
async function assertAllDurable(t: TestContext, topic: string, acknowledged: readonly Acknowledged[]): Promise<void> {
  const queue = await openRunQueue({ log: { kind: 'kafka', brokers: kafkaBrokers(), topic } });
  onCleanup(t, () => queue.stop());
  const missing: string[] = [];
  for (const ack of acknowledged) {
    try {
      await queue.entry(TENANT, ack.entryId);
    } catch (error) {
      missing.push(`${ack.entryId} (acknowledged by ${ack.by}): ${String(error)}`);
    }
  }
  assert.deepEqual(missing, [], 'acknowledged submissions missing from the topic');
}

function servingLine(nodes: readonly Node[], partition: number, since: number): { node: Node; line: Record<string, unknown> } | undefined {
  for (const node of nodes) {
    const line = linesOf(node, 'cluster.partition.serving').find((l) => l.partition === partition && Date.parse(String(l.time)) >= since);
    if (line !== undefined) return { node, line };
  }
  return undefined;
}

function ownedBy(map: { owners: (string | null)[] }, url: string): number[] {
  return map.owners.flatMap((owner, partition) => (owner === url ? [partition] : []));
}

describe('a runlog cluster of serve processes on Kafka', { timeout: 240_000 }, () => {
  it('spreads ownership over its nodes, and a node started later takes its share', async (t) => {
    const { start } = cluster(t);
    const [a, b] = await Promise.all([start(), start()]);
    const two = await stableCluster([a, b]);
    assert.deepEqual([...shares(two).values()], [3, 3]);

    const tickets: { partition: number; entryId: string }[] = [];
    for (let partition = 0; partition < PARTITIONS; partition++) {
      const answer = await submitTo(two.owners[partition]!, threadOn(partition), `before ${partition}`);
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      tickets.push({ partition, entryId: String(answer.body.entryId) });
    }

    const startedAt = Date.now();
    const c = await start();
    const three = await stableCluster([a, b, c]);
    t.diagnostic(`the third node started and every node was ready ${Date.now() - startedAt} ms after its spawn`);
    assert.ok(three.generation > two.generation);
    assert.deepEqual([...shares(three).values()], [2, 2, 2]);
    for (const node of [a, b]) {
      const kept = ownedBy(three, node.url);
      assert.ok(
        kept.every((p) => ownedBy(two, node.url).includes(p)),
        `${node.url} keeps partitions it owned (sticky): ${kept} of ${ownedBy(two, node.url)}`,
      );
    }
    for (const partition of ownedBy(three, c.url)) {
      const serving = linesOf(c, 'cluster.partition.serving').find((line) => line.partition === partition);
      assert.ok(serving !== undefined && typeof serving.unservedMs === 'number', `the new node logs partition ${partition} serving`);
      t.diagnostic(`partition ${partition} moved to the new node: unserved ${serving.unservedMs} ms (from the assignment to serving)`);
    }
    // What was submitted before reads from each partition's new owner (it replayed it).
    for (const { partition, entryId } of tickets) {
      const response = await fetch(`${three.owners[partition]}/v1/tenants/${TENANT}/entries/${entryId}`);
      assert.equal(response.status, 200, `${entryId} on partition ${partition} from its owner`);
    }

    // A clean stop: the node leaves the group, and the others take its partitions at once.
    const stoppedAt = Date.now();
    await stopNode(a);
    for (const partition of ownedBy(three, a.url)) {
      const serving = await waitFor(`partition ${partition} serving again`, async () => servingLine([b, c], partition, stoppedAt));
      t.diagnostic(
        `partition ${partition}: serving on ${serving.node.url} ${Date.parse(String(serving.line.time)) - stoppedAt} ms after its owner's SIGTERM`,
      );
    }
    await stableCluster([b, c]);
    await Promise.all([b, c].map(stopNode));
  });

  it('replaces a node SIGKILLed under load: its partitions serve again on the others, nothing acknowledged is lost', async (t) => {
    const { topic, start } = cluster(t);
    const nodes = await Promise.all([start(), start(), start()]);
    const before = await stableCluster(nodes);
    const live = [...nodes];
    const submitter = new Submitter(() => live);
    submitter.start(4);
    onCleanup(t, () => submitter.stop());
    await waitFor('acknowledgments on every partition', async () =>
      new Set(submitter.acknowledged.map((ack) => ack.partition)).size === PARTITIONS ? true : undefined,
    );

    const victim = live.shift()!;
    const orphaned = ownedBy(before, victim.url);
    const killedAt = Date.now();
    victim.serve.child.kill('SIGKILL');
    const after = await stableCluster(live);
    assert.deepEqual([...shares(after).values()], [3, 3]);
    for (const partition of orphaned) {
      const serving = await waitFor(`partition ${partition} serving on a survivor`, async () => servingLine(live, partition, killedAt));
      const ack = await waitFor(`an acknowledgment on partition ${partition}`, async () =>
        submitter.firstAckAfter(partition, killedAt, victim.url),
      );
      t.diagnostic(
        `partition ${partition}: serving on ${serving.node.url} ${Date.parse(String(serving.line.time)) - killedAt} ms after the SIGKILL ` +
          `(${serving.line.unservedMs} ms of it from the new generation to serving); the submitter's first acknowledgment ${ack.at - killedAt} ms after`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    await submitter.stop();
    await Promise.all(live.map(stopNode));
    t.diagnostic(
      `${submitter.acknowledged.length} submissions acknowledged; refused or failed on the way: ${JSON.stringify([...submitter.refusals])}`,
    );
    await assertAllDurable(t, topic, submitter.acknowledged);
  });

  it('fences a node paused past its session timeout: resumed, it answers NotOwner until it rejoins, and nothing it acknowledged is lost', async (t) => {
    const { topic, start } = cluster(t);
    const nodes = await Promise.all([start(), start(), start()]);
    const before = await stableCluster(nodes);
    const submitter = new Submitter(() => nodes);
    submitter.start(6);
    onCleanup(t, () => submitter.stop());
    await waitFor('acknowledgments on every partition', async () =>
      new Set(submitter.acknowledged.map((ack) => ack.partition)).size === PARTITIONS ? true : undefined,
    );

    const [paused, ...others] = nodes as [Node, ...Node[]];
    const itsPartitions = ownedBy(before, paused.url);
    const pausedAt = Date.now();
    paused.serve.child.kill('SIGSTOP');
    onCleanup(t, () => void paused.serve.child.kill('SIGCONT'));
    await stableCluster(others);
    const takenOverAt = Date.now();
    t.diagnostic(`the others serve the paused node's partitions ${takenOverAt - pausedAt} ms after the SIGSTOP`);

    // Requests for its old partitions, sent to it while it is paused: answered once it resumes, NotOwner, unless
    // (a loaded machine) the node reads one only after it rejoined and served that partition again, checked below.
    const heldAt = Date.now();
    const held = itsPartitions.map(async (partition) => {
      const thread = threadOn(partition);
      return { partition, thread, ...(await submitTo(paused.url, thread, 'held')), at: Date.now() };
    });
    await new Promise((resolve) => setTimeout(resolve, 300));
    paused.serve.child.kill('SIGCONT');
    const heldAnswers = await Promise.all(held);
    const heldAcknowledged: Acknowledged[] = [];
    for (const answer of heldAnswers) {
      if (answer.status !== 421) {
        assert.equal(answer.status, 200, JSON.stringify(answer.body));
        const { partition, thread, at } = answer;
        heldAcknowledged.push({ entryId: String(answer.body.entryId), thread, partition, by: paused.url, sentAt: heldAt, at });
        continue;
      }
      assert.deepEqual([answer.body.code, answer.body.retriable], ['NotOwner', true]);
    }
    await waitFor('the resumed node to see its membership lost', async () =>
      linesOf(paused, 'cluster.lost').length > 0 ? true : undefined,
    );

    const rejoined = await stableCluster(nodes);
    assert.deepEqual([...shares(rejoined).values()], [2, 2, 2], 'the resumed node rejoins and takes its share');
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    await submitter.stop();
    await Promise.all(nodes.map(stopNode));
    const afterTakeover = [
      ...submitter.acknowledged.filter((ack) => ack.by === paused.url && ack.sentAt >= takenOverAt),
      ...heldAcknowledged,
    ];
    // Each asked after the takeover was answered once the node served the partition again, after it knew its membership lost.
    const lostAt = Date.parse(String(linesOf(paused, 'cluster.lost')[0]!.time));
    for (const ack of afterTakeover) {
      const servedAgain = servingLine([paused], ack.partition, lostAt);
      assert.ok(
        servedAgain !== undefined && Date.parse(String(servedAgain.line.time)) <= ack.at,
        `${ack.entryId} acknowledged by the resumed node only after it served partition ${ack.partition} again`,
      );
    }
    t.diagnostic(
      `${submitter.acknowledged.length} submissions acknowledged, ${afterTakeover.length} of them asked of the paused node after the takeover (answered once it had rejoined); ` +
        `of the ${heldAnswers.length} held while it was paused, ${heldAnswers.length - heldAcknowledged.length} answered NotOwner, ${heldAcknowledged.length} once it served the partition again; ` +
        `refused or failed on the way: ${JSON.stringify([...submitter.refusals])}`,
    );
    await assertAllDurable(t, topic, [...submitter.acknowledged, ...heldAcknowledged]);
  });
});
