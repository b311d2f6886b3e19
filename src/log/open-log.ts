/** Opens the log backend a configuration names. Kafka (and kafkajs) load only when asked for. */
import { invalidArgument } from '../errors.ts';
import type { EventLog, LogConfig } from './event-log.ts';
import { openMemoryLog } from './memory/memory-log.ts';

export async function openLog(config: LogConfig, partitions: number): Promise<EventLog> {
  switch (config?.kind) {
    case 'memory':
      return openMemoryLog({ partitions });
    case 'file': {
      const { openFileLog } = await import('./file/file-log.ts');
      return openFileLog({ dir: config.dir, partitions, ...(config.fsync === undefined ? {} : { fsync: config.fsync }) });
    }
    case 'kafka': {
      const { openKafkaLog } = await import('./kafka/kafka-log.ts');
      return openKafkaLog({ ...config, partitions });
    }
    default:
      throw invalidArgument(`log must be { kind: 'memory' }, { kind: 'file', dir } or { kind: 'kafka', brokers, topic }, got ${JSON.stringify(config)}`);
  }
}
