/**
 * Child process of ownership-races.kafka.test.ts: opens an assigned queue on the Kafka topic
 * argv[2] (KAFKA_BROKERS), starts acquiring partition 0 and stops the queue while the claim
 * is connecting its writer. Prints how the acquire ended, then must exit by itself: a Kafka
 * connection left open (a writer connected after the log closed) keeps it alive.
 */
import { openKafkaLog } from '../../src/log/kafka/kafka-log.ts';
import { openRunQueueOnLog } from '../../src/queue/open-run-queue.ts';
import { kafkaBrokers } from '../log/kafka-test-support.ts';
import { wrapLog } from '../support/wrap-log.ts';

const log = await openKafkaLog({ brokers: kafkaBrokers(), topic: process.argv[2]!, partitions: 2 });
let claiming!: () => void;
const claimStarted = new Promise<void>((resolve) => (claiming = resolve));
const watched = wrapLog(log, {
  appendsInFlight: log.appendsInFlight,
  claim: (partition: number) => {
    claiming();
    return log.claim(partition);
  },
  release: (partition: number) => log.release!(partition),
});
const queue = await openRunQueueOnLog(watched, { ownership: 'assigned' });
const acquired = queue.acquire(0).then(
  () => 'resolved',
  (error: unknown) => `rejected ${String(error)}`,
);
await claimStarted;
await new Promise((resolve) => setImmediate(resolve)); // the claim is under way: its first InitProducerId is on the wire
await queue.stop();
process.stdout.write(`stopped; the acquire ${await acquired}\n`);
