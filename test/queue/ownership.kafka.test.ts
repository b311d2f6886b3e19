/**
 * Two queues with ownership 'assigned' on one Kafka topic, as two cluster nodes: the one that
 * acquires a partition last owns it. The other's next append is fenced, and the partition is
 * released there (NotOwner, retriable), not down for good; it can acquire the partition again
 * later (fencing the other in turn), and sees everything the other acknowledged meanwhile.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isRunlogError } from '../../src/errors.ts';
import { partitionOf } from '../../src/log/partitioner.ts';
import { openRunQueueOnLog } from '../../src/queue/open-run-queue.ts';
import type { RunlogWarning } from '../../src/warnings.ts';
import { submitOf } from '../contract/fixtures.ts';
import { openTestKafkaLog, uniqueTopic } from '../log/kafka-test-support.ts';
import { openKafkaLog } from '../../src/log/kafka/kafka-log.ts';
import { kafkaBrokers } from '../log/kafka-test-support.ts';
import { onCleanup } from '../support/cleanup.ts';

const PARTITIONS = 2;

function threadOn(partition: number): string {
  for (let i = 0; ; i++) if (partitionOf('acme', `t${i}`, PARTITIONS) === partition) return `t${i}`;
}

/** The command whose append was fenced fails retriably (LogUnavailable: written or not, its new owner knows); later ones NotOwner. */
function fencedRetriably(e: unknown): boolean {
  return (isRunlogError(e, 'LogUnavailable') || isRunlogError(e, 'NotOwner')) && e.retriable;
}

describe("queues with ownership 'assigned' on one Kafka topic", () => {
  it('the later acquire fences the earlier owner, whose partition is released (NotOwner), and can be acquired back', async (t) => {
    const topic = uniqueTopic();
    await openTestKafkaLog(t, PARTITIONS, { topic }); // creates the topic and deletes it at the end
    const warnings: RunlogWarning[] = [];
    const openNode = async () => {
      const log = await openKafkaLog({ brokers: kafkaBrokers(), topic, partitions: PARTITIONS });
      const queue = await openRunQueueOnLog(log, { ownership: 'assigned', onWarning: (w) => warnings.push(w) });
      onCleanup(t, () => queue.stop());
      return queue;
    };
    const [a, b] = [await openNode(), await openNode()];
    const thread = threadOn(0);

    await a.acquire(0);
    const first = await a.submit(submitOf('acme', thread));
    await b.acquire(0); // fences a
    const second = await b.submit(submitOf('acme', thread));

    await assert.rejects(a.submit(submitOf('acme', thread)), fencedRetriably);
    // Released, not down: every later command is NotOwner, retriable.
    for (let i = 0; i < 50 && (await a.health())[0]!.mode !== 'unowned'; i++) await new Promise((r) => setTimeout(r, 100));
    assert.equal((await a.health())[0]!.mode, 'unowned');
    await assert.rejects(a.entry('acme', first.entryId), (e: unknown) => isRunlogError(e, 'NotOwner') && e.retriable);
    assert.ok(
      warnings.some((w) => w.code === 'RUNLOG_PARTITION_LOST'),
      'the loss is reported',
    );

    await a.acquire(0); // fences b in turn, and replays what b acknowledged
    assert.deepEqual(
      (await a.openEntries('acme', thread)).map((e) => e.entryId),
      [first.entryId, second.entryId],
    );
    await a.submit(submitOf('acme', thread));
    await assert.rejects(b.submit(submitOf('acme', thread)), fencedRetriably);
  });
});
