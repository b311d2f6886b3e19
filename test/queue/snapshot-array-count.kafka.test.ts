/**
 * The Kafka twin of snapshot-array-count.test.ts: Kafka's snapshot store hands the reader a
 * snapshot's bytes whole (its records joined), so a restart on Kafka decodes the state whole
 * (snapshot-codec.ts), not where it lies. A checksummed snapshot whose array count lies (2^30
 * items where there are none, or -2^30 items in a block of 0 bytes), each array with each lie,
 * one a partition of one topic: a restart, in a child with a small heap, ignores each
 * (RUNLOG_SNAPSHOT_IGNORED) and opens as a replay from zero would. On main at 53c1d5a the child
 * died out of memory on the first partition.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { openKafkaLog } from '../../src/log/kafka/kafka-log.ts';
import { openRunQueueOnLog } from '../../src/queue/open-run-queue.ts';
import { onCleanup } from '../support/cleanup.ts';
import { deleteTopic, kafkaBrokers, uniqueTopic } from '../log/kafka-test-support.ts';
import { COUNT_DAMAGES, notIgnored, openInChild, saveCountLies, smallWorkload } from './snapshot-damage.ts';

it(
  'a checksummed snapshot on Kafka whose array count lies is ignored, every array of the state, each lie',
  { timeout: 300_000 },
  async (t) => {
    const topic = uniqueTopic('runlog-snapshot-count');
    onCleanup(t, () => deleteTopic(topic));
    await smallWorkload(await openRunQueueOnLog(await openKafkaLog({ brokers: kafkaBrokers(), topic, partitions: COUNT_DAMAGES.length })));
    const log = await openKafkaLog({ brokers: kafkaBrokers(), topic });
    try {
      await saveCountLies(log.snapshots!);
    } finally {
      await log.close();
    }
    const opened = await openInChild(['kafka', topic], 240_000);
    assert.deepEqual(
      notIgnored(
        opened,
        COUNT_DAMAGES.map((d) => d.what),
      ),
      [],
    );
  },
);
