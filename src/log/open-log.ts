/** Opens the log backend a configuration names. Kafka (and kafkajs) load only when asked for. */
import { invalidArgument } from '../errors.ts';
import type { WarningListener } from '../warnings.ts';
import type { EventLog, LogConfig } from './event-log.ts';
import { openMemoryLog } from './memory/memory-log.ts';

/** The partition count of a memory log when none is asked for (file and Kafka logs have their own). */
export const DEFAULT_PARTITIONS = 8;

/**
 * `partitions` omitted: a file log or Kafka topic that exists keeps its count; a new one gets
 * its backend's default (file: DEFAULT_FILE_PARTITIONS, Kafka: DEFAULT_KAFKA_PARTITIONS);
 * memory: DEFAULT_PARTITIONS. `onWarning` hears of repairs made on open (default: process.emitWarning).
 */
export async function openLog(config: LogConfig, partitions?: number, onWarning?: WarningListener): Promise<EventLog> {
  rejectUnknownOptions(config);
  switch (config?.kind) {
    case 'memory':
      return openMemoryLog({ partitions: partitions ?? DEFAULT_PARTITIONS });
    case 'file': {
      const { openFileLog } = await import('./file/file-log.ts');
      const fsync = config.fsync === undefined ? {} : { fsync: config.fsync };
      return openFileLog({ dir: config.dir, ...(partitions === undefined ? {} : { partitions }), ...fsync, ...(onWarning === undefined ? {} : { onWarning }) });
    }
    case 'kafka': {
      const { openKafkaLog } = await import('./kafka/kafka-log.ts');
      return openKafkaLog({ ...config, ...(partitions === undefined ? {} : { partitions }) });
    }
    default:
      throw invalidArgument(`log must be { kind: 'memory' }, { kind: 'file', dir } or { kind: 'kafka', brokers, topic }, got ${JSON.stringify(config)}`);
  }
}

/** The options each backend takes: a misspelt one is refused, not ignored. */
const OPTIONS: Record<string, readonly string[]> = {
  memory: ['kind'],
  file: ['kind', 'dir', 'fsync'],
  kafka: ['kind', 'brokers', 'topic', 'clientId', 'replicationFactor', 'topicConfig', 'transactionTimeoutMs', 'tailWaitMs'],
};

function rejectUnknownOptions(config: LogConfig): void {
  const allowed = typeof config === 'object' && config !== null ? OPTIONS[config.kind] : undefined;
  if (allowed === undefined) return; // not a backend at all: openLog's switch says so
  const unknown = Object.keys(config).find((key) => !allowed.includes(key));
  if (unknown !== undefined) throw invalidArgument(`the ${config.kind} log has no option ${JSON.stringify(unknown)}; it takes ${allowed.filter((k) => k !== 'kind').join(', ') || 'none'}`);
}
