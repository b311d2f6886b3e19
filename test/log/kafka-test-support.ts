/**
 * Helpers for tests against a real Kafka broker (`*.kafka.test.ts`): where the broker is
 * (KAFKA_BROKERS, set by test/run-tests.mjs), a unique topic per test, deleted after it.
 */
import { randomUUID } from 'node:crypto';
import type { TestContext } from 'node:test';
import kafkajs from 'kafkajs';
import { openKafkaLog, type KafkaEventLog, type KafkaLogOptions } from '../../src/log/kafka/kafka-log.ts';
import { onCleanup } from '../support/cleanup.ts';

export function kafkaBrokers(): string[] {
  const brokers = process.env.KAFKA_BROKERS;
  if (!brokers) throw new Error('KAFKA_BROKERS is not set: run Kafka tests through `node test/run-tests.mjs` (it starts a broker)');
  return brokers.split(',').map((b) => b.trim());
}

export function uniqueTopic(prefix = 'runlog-test'): string {
  return `${prefix}-${randomUUID().slice(0, 12)}`;
}

/** Deletes `topic`, and its snapshots topic if a queue's snapshot created it (src/log/kafka/snapshot-store.ts). */
export async function deleteTopic(topic: string): Promise<void> {
  const kafka = new kafkajs.Kafka({ clientId: 'runlog-test-cleanup', brokers: kafkaBrokers(), logLevel: kafkajs.logLevel.NOTHING });
  const admin = kafka.admin();
  try {
    await admin.connect();
    const snapshots = `${topic}.snapshots`;
    const topics = (await admin.listTopics()).includes(snapshots) ? [topic, snapshots] : [topic];
    await admin.deleteTopics({ topics, timeout: 10_000 });
  } finally {
    await admin.disconnect();
  }
}

/** Opens a Kafka log on a fresh topic that is deleted (after the log closes) when the test ends, after the cleanups registered later through onCleanup. */
export async function openTestKafkaLog(t: TestContext, partitions: number, extra: Partial<KafkaLogOptions> = {}): Promise<KafkaEventLog> {
  const topic = extra.topic ?? uniqueTopic();
  const log = await openKafkaLog({ brokers: kafkaBrokers(), topic, partitions, ...extra });
  onCleanup(t, async () => {
    await log.close();
    await deleteTopic(topic);
  });
  return log;
}
