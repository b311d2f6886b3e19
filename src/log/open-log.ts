/** Opens the log backend a configuration names. Kafka (and kafkajs) load only when asked for. */
import { invalidArgument } from '../errors.ts';
import type { EventLog, LogConfig } from './event-log.ts';
import { openMemoryLog } from './memory/memory-log.ts';

/** The partition count of a memory log when none is asked for (file and Kafka logs have their own). */
export const DEFAULT_PARTITIONS = 8;

/**
 * `partitions` omitted: a file log or Kafka topic that exists keeps its count; a new one gets
 * its backend's default (file: DEFAULT_FILE_PARTITIONS, Kafka: DEFAULT_KAFKA_PARTITIONS);
 * memory: DEFAULT_PARTITIONS.
 */
export async function openLog(config: LogConfig, partitions?: number): Promise<EventLog> {
  switch (config?.kind) {
    case 'memory':
      return openMemoryLog({ partitions: partitions ?? DEFAULT_PARTITIONS });
    case 'file': {
      const { openFileLog } = await import('./file/file-log.ts');
      const fsync = config.fsync === undefined ? {} : { fsync: config.fsync };
      return openFileLog({ dir: config.dir, ...(partitions === undefined ? {} : { partitions }), ...fsync });
    }
    case 'kafka': {
      const { openKafkaLog } = await import('./kafka/kafka-log.ts');
      return openKafkaLog({ ...config, ...(partitions === undefined ? {} : { partitions }) });
    }
    default:
      throw invalidArgument(`log must be { kind: 'memory' }, { kind: 'file', dir } or { kind: 'kafka', brokers, topic }, got ${JSON.stringify(config)}`);
  }
}
