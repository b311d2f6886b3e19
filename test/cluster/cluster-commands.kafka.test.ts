/**
 * The commands topic through a cluster of `runlog serve --group` child processes: a producer
 * that is not runlog (kafkajs's transactional producer) writes a SubmitCommand for a thread of
 * every partition to `<topic>.commands` in one transaction, and each is answered by the node
 * owning its partition (the node starts the command intake per partition it serves): its entry
 * is open on its thread, read from its owner over HTTP; a node stopped hands its partitions'
 * intake to the others, which answer the commands sent after exactly once.
 */
import assert from 'node:assert/strict';
import { describe, it, type TestContext } from 'node:test';
import kafkajs from 'kafkajs';
import { encodeCommand } from '../../src/events/command-codec.ts';
import type { SubmitCommand } from '../../src/events/command-types.ts';
import { threadKey } from '../../src/events/keys.ts';
import { deleteTopic, kafkaBrokers, uniqueTopic } from '../log/kafka-test-support.ts';
import { onCleanup } from '../support/cleanup.ts';
import { PARTITIONS, stableCluster, startNode, TENANT, threadOn, waitFor, type ClusterMapJson } from './cluster-nodes.ts';

function submitCommand(requestId: string, thread: string): SubmitCommand {
  return {
    type: 'SubmitCommand',
    requestId,
    tenant: TENANT,
    thread,
    agent: 'billing',
    input: new TextEncoder().encode(requestId),
    key: null,
    strategy: null,
    priority: null,
    notBefore: null,
    deadline: null,
    maxAttempts: null,
    metadata: { requestId },
  };
}

async function openProducer(t: TestContext, commandsTopic: string) {
  const kafka = new kafkajs.Kafka({ clientId: 'cluster-commands-test', brokers: kafkaBrokers(), logLevel: kafkajs.logLevel.NOTHING });
  const producer = kafka.producer({ transactionalId: uniqueTopic('producer'), maxInFlightRequests: 1, idempotent: true });
  await producer.connect();
  onCleanup(t, () => producer.disconnect());
  return async (commands: SubmitCommand[]): Promise<void> => {
    const transaction = await producer.transaction();
    const messages = commands.map((c) => ({
      key: Buffer.from(threadKey(c.tenant, c.thread), 'utf8'),
      value: Buffer.from(encodeCommand(c)),
    }));
    await transaction.send({ topic: commandsTopic, messages });
    await transaction.commit();
  };
}

/** The request ids of the open entries of `thread`, read from its partition's owner. */
async function openRequests(map: ClusterMapJson, partition: number, thread: string): Promise<string[]> {
  const response = await fetch(`${map.owners[partition]}/v1/tenants/${TENANT}/threads/${thread}/entries`);
  if (response.status !== 200) return [];
  const { entries } = (await response.json()) as { entries: { metadata: Record<string, string> }[] };
  return entries.map((entry) => entry.metadata.requestId!);
}

describe('the commands topic through a cluster', { timeout: 240_000 }, () => {
  it("each node answers the commands of the partitions it owns, and a stopped node's go to the others", async (t) => {
    const topic = uniqueTopic('runlog-cluster-commands');
    onCleanup(t, () => deleteTopic(`${topic}.commands`));
    onCleanup(t, () => deleteTopic(topic));
    const group = `${topic}-nodes`;
    const [a, b] = await Promise.all([startNode(t, topic, group), startNode(t, topic, group)]);
    let map = await stableCluster([a, b]);
    const send = await openProducer(t, `${topic}.commands`);
    const partitions = Array.from({ length: PARTITIONS }, (_, p) => p);

    await send(partitions.map((p) => submitCommand(`first-${p}`, threadOn(p))));
    for (const p of partitions)
      await waitFor(`first-${p} answered`, async () =>
        (await openRequests(map, p, threadOn(p))).includes(`first-${p}`) ? true : undefined,
      );

    a.serve.child.kill('SIGTERM');
    assert.deepEqual(await a.serve.exited, { code: 0, signal: null }, a.serve.stderr());
    map = await stableCluster([b]);
    await send(partitions.map((p) => submitCommand(`second-${p}`, threadOn(p))));
    for (const p of partitions) {
      const requests = await waitFor(`second-${p} answered`, async () => {
        const open = await openRequests(map, p, threadOn(p));
        return open.includes(`second-${p}`) ? open : undefined;
      });
      assert.deepEqual(requests, [`first-${p}`, `second-${p}`], `partition ${p}: each command answered once, in order`);
    }
  });
});
