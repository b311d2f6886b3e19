/**
 * The one topic a Kafka EventLog lives in: created if missing (compacted, with the partition
 * count asked for), and checked if present. A topic with another partition count or cleanup
 * policy is refused, never changed: the partition of a thread is hash(thread) mod partitions,
 * so a changed count would silently move threads away from their history.
 */
import kafkajs from 'kafkajs';
import type { Admin } from 'kafkajs';
import { RunlogError } from '../../errors.ts';
import { toRunlogError } from './errors.ts';

export interface TopicSpec {
  topic: string;
  partitions: number;
  replicationFactor: number;
  /** Extra topic configs (e.g. segment.ms, min.cleanable.dirty.ratio); cleanup.policy is always compact. */
  topicConfig: Record<string, string>;
}

export async function ensureTopic(admin: Admin, spec: TopicSpec): Promise<void> {
  const configEntries = Object.entries({ ...spec.topicConfig, 'cleanup.policy': 'compact' }).map(([name, value]) => ({ name, value }));
  try {
    await admin.createTopics({
      // KRaft: producing or fetching before the leaders are known fails, so wait for them.
      waitForLeaders: true,
      topics: [{ topic: spec.topic, numPartitions: spec.partitions, replicationFactor: spec.replicationFactor, configEntries }],
    });
  } catch (error) {
    if (!isAlreadyExists(error)) throw toRunlogError(error, `creating topic ${spec.topic}`);
  }
  await checkTopic(admin, spec);
}

function isAlreadyExists(error: unknown): boolean {
  const e = error as { type?: string; errors?: { type?: string }[] };
  return e.type === 'TOPIC_ALREADY_EXISTS' || (e.errors ?? []).some((x) => x.type === 'TOPIC_ALREADY_EXISTS');
}

async function checkTopic(admin: Admin, spec: TopicSpec): Promise<void> {
  const [partitions, policy] = await Promise.all([partitionCount(admin, spec.topic), cleanupPolicy(admin, spec.topic)]);
  if (partitions !== spec.partitions) {
    throw new RunlogError(
      'InvalidArgument',
      `Kafka topic ${spec.topic} has ${partitions} partitions, expected ${spec.partitions}; runlog never repartitions a topic`,
    );
  }
  if (!policy.split(',').map((p) => p.trim()).includes('compact')) {
    throw new RunlogError('InvalidArgument', `Kafka topic ${spec.topic} has cleanup.policy=${policy}, expected compact`);
  }
}

async function partitionCount(admin: Admin, topic: string): Promise<number> {
  try {
    const metadata = await admin.fetchTopicMetadata({ topics: [topic] });
    return metadata.topics[0]?.partitions.length ?? 0;
  } catch (error) {
    throw toRunlogError(error, `reading the metadata of topic ${topic}`);
  }
}

async function cleanupPolicy(admin: Admin, topic: string): Promise<string> {
  try {
    const described = await admin.describeConfigs({
      includeSynonyms: false,
      resources: [{ type: kafkajs.ConfigResourceTypes.TOPIC, name: topic, configNames: ['cleanup.policy'] }],
    });
    const entry = described.resources[0]?.configEntries.find((c) => c.configName === 'cleanup.policy');
    return entry?.configValue ?? 'delete';
  } catch (error) {
    throw toRunlogError(error, `reading the configs of topic ${topic}`);
  }
}
