/**
 * Child of kafka-log.kafka.test.ts: opens a log on the topic named (created with 1 partition),
 * appends three records, reads them back by offset all at once (as a closed entry's read-back
 * does) twice, then 30 more while it closes the log, and prints what it read. It must then
 * exit by itself: a Kafka connection left open would keep it alive.
 */
import { openKafkaLog } from '../../src/log/kafka/kafka-log.ts';
import { kafkaBrokers } from './kafka-test-support.ts';

const log = await openKafkaLog({ brokers: kafkaBrokers(), topic: process.argv[2]!, partitions: 1 });
const offsets = await log.append(
  0,
  ['a', 'b', 'c'].map((key) => ({ key, value: Buffer.from(key) })),
);
const keys: string[] = [];
for (let round = 0; round < 2; round++) {
  const records = await Promise.all(offsets.map((offset) => log.readAt!(0, offset)));
  keys.push(records.map((record) => record?.key ?? 'none').join(''));
}
// Reads still queued or in flight as the log closes: they answer or fail Stopped, and nothing connects after the close.
const late = Array.from({ length: 30 }, (_, i) => log.readAt!(0, offsets[i % offsets.length]!));
await log.close();
const settled = await Promise.allSettled(late);
const failures = settled.flatMap((outcome) => (outcome.status === 'rejected' ? [(outcome.reason as { code?: string }).code] : []));
const stopped = failures.every((code) => code === 'Stopped') ? 'answered or Stopped' : `failed ${failures.join(',')}`;
process.stdout.write(`read ${keys.join(' ')}; late reads ${stopped}\n`);
