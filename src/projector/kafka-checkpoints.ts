/**
 * Checkpoints of projections of a Kafka log, in the compacted topic `<topic>.projections`
 * beside it (created if missing: one partition), keyed by projection name. Any number of
 * processes may keep checkpoints there: each writes only its own projections' keys.
 */
import { optionalName, requireName, requireNames, requireObject } from '../validation/index.ts';
import type { CheckpointStore } from './checkpoint-store.ts';
import { projectionName } from '../../projections/projection.ts';

export interface KafkaCheckpointOptions {
  brokers: string[];
  /** The log's topic: checkpoints go to `<topic>.projections`. */
  topic: string;
  clientId?: string;
}

export function checkpointsTopicOf(topic: string): string {
  return `${topic}.projections`;
}

export async function kafkaCheckpoints(options: KafkaCheckpointOptions): Promise<CheckpointStore> {
  const given = requireObject('kafkaCheckpoints options', options, ['brokers', 'topic', 'clientId']);
  const brokers = requireNames('brokers', given.brokers);
  const topic = requireName('topic', given.topic);
  const clientId = optionalName('clientId', given.clientId);
  const { openKeyedTopic } = await import('../log/kafka/keyed-topic.ts');
  const store = await openKeyedTopic({ brokers, topic: checkpointsTopicOf(topic), ...(clientId === null ? {} : { clientId }) });
  return {
    logId: `kafka:${topic}`,
    load: (name) => store.load(projectionName(name)),
    save: (name, bytes) => store.save(projectionName(name), bytes),
    remove: (name) => store.remove(projectionName(name)),
    close: () => store.close(),
  };
}
