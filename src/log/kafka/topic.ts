/**
 * The one topic a Kafka EventLog lives in: created if missing (compacted, with the partition
 * count asked for), and checked if present. A topic with another partition count or cleanup
 * policy is refused, never changed: the partition of a thread is hash(thread) mod partitions,
 * so a changed count would silently move threads away from their history.
 */
import kafkajs from 'kafkajs';
import type { Admin } from 'kafkajs';
import { RunlogError } from '../../errors.ts';
import { retry } from '../../retry.ts';
import { hasErrorType, isStaleLeaderError, toRunlogError } from './errors.ts';

export interface TopicSpec {
  topic: string;
  partitions: number;
  /** Omitted: the cluster's default.replication.factor (kafkajs sends -1). */
  replicationFactor?: number;
  /** Extra topic configs (e.g. segment.ms, min.cleanable.dirty.ratio); cleanup.policy is always compact. */
  topicConfig: Record<string, string>;
}

/** What runlog needs to know of its topic once it is there. */
export interface TopicFacts {
  /** The topic's max.message.bytes: the largest record batch its broker accepts. */
  maxMessageBytes: number;
}

/** Creates the topic if missing, checks it, and answers its facts. */
export async function ensureTopic(admin: Admin, spec: TopicSpec): Promise<TopicFacts> {
  const configEntries = Object.entries({ ...spec.topicConfig, 'cleanup.policy': 'compact' }).map(([name, value]) => ({ name, value }));
  try {
    await admin.createTopics({
      // KRaft: producing or fetching before the leaders are known fails, so wait for them.
      waitForLeaders: true,
      topics: [
        {
          topic: spec.topic,
          numPartitions: spec.partitions,
          configEntries,
          ...(spec.replicationFactor ? { replicationFactor: spec.replicationFactor } : {}),
        },
      ],
    });
  } catch (error) {
    // On KRaft, kafkajs's waitForLeaders can see the new topic's metadata before the broker
    // does (UNKNOWN_TOPIC_OR_PARTITION): the topic exists, only not everywhere yet.
    if (!hasErrorType(error, 'TOPIC_ALREADY_EXISTS') && !isStaleLeaderError(error)) {
      throw toRunlogError(error, `creating topic ${spec.topic}`);
    }
  }
  await waitUntilServed(admin, spec.topic);
  return checkTopic(admin, spec);
}

const SERVED_TIMEOUT_MS = 30_000;

/** Waits until every partition has a leader that answers ListOffsets for it. */
export async function waitUntilServed(admin: Admin, topic: string): Promise<void> {
  const served = async (): Promise<void> => {
    const metadata = await admin.fetchTopicMetadata({ topics: [topic] });
    const partitions = metadata.topics[0]?.partitions ?? [];
    if (partitions.length === 0 || partitions.some((p) => p.leader < 0)) throw new NotServedYet();
    await admin.fetchTopicOffsets(topic);
  };
  const retriable = (error: unknown): boolean => error instanceof NotServedYet || isStaleLeaderError(error);
  try {
    await retry(served, { firstMs: 10, maxMs: 100, forMs: SERVED_TIMEOUT_MS, retriable });
  } catch (error) {
    if (!(error instanceof NotServedYet)) throw toRunlogError(error, `waiting for topic ${topic}`);
    throw new RunlogError('LogUnavailable', `topic ${topic} has no leader for every partition after ${SERVED_TIMEOUT_MS} ms`);
  }
}

class NotServedYet extends Error {}

/** Checks an existing topic (partition count, cleanup policy) and answers its facts; creates nothing. */
export async function checkTopic(admin: Admin, spec: TopicSpec): Promise<TopicFacts> {
  const [partitions, configs] = await Promise.all([partitionCount(admin, spec.topic), topicConfigs(admin, spec.topic)]);
  const policy = configs.get('cleanup.policy') ?? 'delete';
  if (partitions !== spec.partitions) {
    throw new RunlogError(
      'InvalidArgument',
      `Kafka topic ${spec.topic} has ${partitions} partitions, expected ${spec.partitions}; runlog never repartitions a topic`,
    );
  }
  if (
    !policy
      .split(',')
      .map((p) => p.trim())
      .includes('compact')
  ) {
    throw new RunlogError('InvalidArgument', `Kafka topic ${spec.topic} has cleanup.policy=${policy}, expected compact`);
  }
  const maxMessageBytes = Number(configs.get('max.message.bytes'));
  if (!Number.isSafeInteger(maxMessageBytes) || maxMessageBytes < 1) {
    throw new RunlogError(
      'LogUnavailable',
      `Kafka topic ${spec.topic}: its max.message.bytes is ${JSON.stringify(configs.get('max.message.bytes'))}, not a size runlog can bound its records by`,
    );
  }
  return { maxMessageBytes };
}

/** The partition count of `topic`, or null when it does not exist yet. */
export async function existingPartitionCount(admin: Admin, topic: string): Promise<number | null> {
  let topics: string[];
  try {
    topics = await admin.listTopics();
  } catch (error) {
    throw toRunlogError(error, 'listing the topics');
  }
  return topics.includes(topic) ? partitionCount(admin, topic) : null;
}

async function partitionCount(admin: Admin, topic: string): Promise<number> {
  try {
    const metadata = await admin.fetchTopicMetadata({ topics: [topic] });
    return metadata.topics[0]?.partitions.length ?? 0;
  } catch (error) {
    throw toRunlogError(error, `reading the metadata of topic ${topic}`);
  }
}

/** The topic configs runlog checks or derives its limits from, as the broker reports them (defaults included). */
async function topicConfigs(admin: Admin, topic: string): Promise<Map<string, string>> {
  try {
    const described = await admin.describeConfigs({
      includeSynonyms: false,
      resources: [{ type: kafkajs.ConfigResourceTypes.TOPIC, name: topic, configNames: ['cleanup.policy', 'max.message.bytes'] }],
    });
    const entries = described.resources[0]?.configEntries ?? [];
    return new Map(entries.map((c) => [c.configName, c.configValue]));
  } catch (error) {
    throw toRunlogError(error, `reading the configs of topic ${topic}`);
  }
}
