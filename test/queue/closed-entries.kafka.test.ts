/** The closed-entry lifecycle (closed-entry-lifecycle.ts) on the real broker: closed entries read back by offset, read_committed. */
import { test } from 'node:test';
import { openKafkaLog } from '../../src/log/kafka/kafka-log.ts';
import { kafkaBrokers, openTestKafkaLog } from '../log/kafka-test-support.ts';
import { closedEntryLifecycle } from './closed-entry-lifecycle.ts';

test('a closed entry keeps its key and run ids until pruned; then it reads TicketExpired, after restarts too (Kafka)', async (t) => {
  const first = await openTestKafkaLog(t, 1);
  let opened = 0;
  // The first open is the test's log (deleted after); each restart opens the same topic anew.
  await closedEntryLifecycle(t, async () =>
    opened++ === 0 ? first : openKafkaLog({ brokers: kafkaBrokers(), topic: first.topic, partitions: 1 }),
  );
});
