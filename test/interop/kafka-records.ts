/**
 * Plain Kafka access for the interop tests, as any consumer outside runlog would have it
 * (kafkajs, not runlog's log): create a topic, and read a topic's records, read_committed or
 * read_uncommitted, until the records seen satisfy a condition.
 */
import kafkajs from 'kafkajs';
import { randomUUID } from 'node:crypto';
import { kafkaBrokers } from '../log/kafka-test-support.ts';

/** How long a test waits for records it expects (a consumer group join takes a few seconds). */
export const READ_TIMEOUT_MS = 60_000;

export interface TopicRecord {
  partition: number;
  offset: bigint;
  key: Buffer | null;
  value: Buffer | null;
}

function client(clientId: string): kafkajs.Kafka {
  return new kafkajs.Kafka({ clientId, brokers: kafkaBrokers(), logLevel: kafkajs.logLevel.NOTHING });
}

/** Creates a topic (cleanup.policy=delete) and waits until every partition has a leader. */
export async function createTopic(topic: string, partitions: number): Promise<void> {
  const admin = client('runlog-interop-admin').admin();
  await admin.connect();
  try {
    await admin.createTopics({ topics: [{ topic, numPartitions: partitions }] });
    for (let i = 0; ; i++) {
      const metadata = await admin.fetchTopicMetadata({ topics: [topic] }).catch(() => null);
      const served = metadata?.topics[0]?.partitions ?? [];
      if (served.length === partitions && served.every((p) => p.leader >= 0)) return;
      if (i >= 300) throw new Error(`topic ${topic}: not every partition has a leader after 30 s`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  } finally {
    await admin.disconnect();
  }
}

export interface ReadOptions {
  /** false: read_committed (what runlog's owner reads); true: every record written, aborted ones too. */
  readUncommitted: boolean;
  /** Stops reading once this holds for the records seen so far (in the order read). */
  until(records: readonly TopicRecord[]): boolean;
  timeoutMs: number;
}

/**
 * The records of `topic` from the beginning, until `until` holds. A timeout rejects with what
 * was seen. (A consumer of a group of its own, so the topic's records arrive partition by
 * partition in offset order; control records of transactions are never handed over.)
 */
export async function readRecords(topic: string, options: ReadOptions): Promise<TopicRecord[]> {
  const consumer = client('runlog-interop-reader').consumer({
    groupId: `runlog-interop-reader-${randomUUID()}`,
    readUncommitted: options.readUncommitted,
    maxWaitTimeInMs: 200,
  });
  const records: TopicRecord[] = [];
  await consumer.connect();
  try {
    await consumer.subscribe({ topics: [topic], fromBeginning: true });
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        const seen = records.map((r) => `${r.partition}@${r.offset}`).join(' ');
        reject(
          new Error(
            `reading ${topic} (${options.readUncommitted ? 'read_uncommitted' : 'read_committed'}): condition not met after ${options.timeoutMs} ms; seen: ${seen}`,
          ),
        );
      }, options.timeoutMs);
      const check = (): void => {
        if (!options.until(records)) return;
        clearTimeout(timer);
        resolve();
      };
      check();
      consumer
        .run({
          autoCommit: false,
          eachMessage: async ({ partition, message }) => {
            records.push({ partition, offset: BigInt(message.offset), key: message.key, value: message.value });
            check();
          },
        })
        .catch((error: unknown) => {
          clearTimeout(timer);
          reject(error instanceof Error ? error : new Error(String(error)));
        });
    });
    return records;
  } finally {
    await consumer.disconnect();
  }
}
