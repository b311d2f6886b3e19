/** Opens the log backend a configuration names. Kafka (and kafkajs) load only when asked for. */
import { invalidArgument } from '../errors.ts';
import type { EventLog, LogConfig } from './event-log.ts';
import { openMemoryLog } from './memory/memory-log.ts';

/** The partition count of a memory or Kafka log when none is asked for (the file log has its own). */
export const DEFAULT_PARTITIONS = 8;

/** `partitions` omitted: DEFAULT_PARTITIONS, or for a file log its existing count or DEFAULT_FILE_PARTITIONS. */
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
      return openKafkaLog({ ...config, partitions: partitions ?? DEFAULT_PARTITIONS });
    }
    default:
      throw invalidArgument(`log must be { kind: 'memory' }, { kind: 'file', dir } or { kind: 'kafka', brokers, topic }, got ${JSON.stringify(config)}`);
  }
}
