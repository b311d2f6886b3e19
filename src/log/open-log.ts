/** Opens the log backend a configuration names. Kafka (and kafkajs) load only when asked for. */
import { describe, optionalFunction, rejectUnknownKeys, requireObject } from '../validation/index.ts';
import { invalidArgument } from '../errors.ts';
import type { WarningListener } from '../warnings.ts';
import { checkPartitionCount } from './log-arguments.ts';
import type { EventLog, LogConfig } from './event-log.ts';
import { openMemoryLog } from './memory/memory-log.ts';

/** The partition count of a memory log when none is asked for (file and Kafka logs have their own). */
export const DEFAULT_PARTITIONS = 8;

/**
 * `partitions` omitted: a file log or Kafka topic that exists keeps its count; a new one gets
 * its backend's default (file: DEFAULT_FILE_PARTITIONS, Kafka: DEFAULT_KAFKA_PARTITIONS);
 * memory: DEFAULT_PARTITIONS. `onWarning` hears of repairs made on open (default: process.emitWarning).
 */
export async function openLog(given: LogConfig, partitions?: number, onWarning?: WarningListener): Promise<EventLog> {
  const config = readConfig(given);
  if (partitions !== undefined) checkPartitionCount(partitions, config.kind);
  optionalFunction('onWarning', onWarning);
  switch (config.kind) {
    case 'memory':
      return openMemoryLog({ partitions: partitions ?? DEFAULT_PARTITIONS });
    case 'file': {
      const { openFileLog } = await import('./file/file-log.ts');
      const fsync = config.fsync === undefined ? {} : { fsync: config.fsync };
      return openFileLog({
        dir: config.dir,
        ...(partitions === undefined ? {} : { partitions }),
        ...fsync,
        ...(onWarning === undefined ? {} : { onWarning }),
      });
    }
    case 'kafka': {
      const { openKafkaLog } = await import('./kafka/kafka-log.ts');
      return openKafkaLog({ ...config, ...(partitions === undefined ? {} : { partitions }) });
    }
  }
}

/**
 * Opens the log a configuration names to read only (the command line's history and
 * replay): nothing is created, repaired, cut or locked, no Kafka writer is fenced, and a
 * log a live writer holds can be read. A log that does not exist is InvalidArgument.
 */
export async function openLogReadOnly(given: LogConfig, onWarning?: WarningListener): Promise<EventLog> {
  const config = readConfig(given);
  optionalFunction('onWarning', onWarning);
  switch (config.kind) {
    case 'file': {
      const { openFileLog } = await import('./file/file-log.ts');
      return openFileLog({ dir: config.dir, readOnly: true, ...(onWarning === undefined ? {} : { onWarning }) });
    }
    case 'kafka': {
      const { openKafkaLog } = await import('./kafka/kafka-log.ts');
      return openKafkaLog({ ...config, readOnly: true });
    }
    case 'memory':
      throw invalidArgument(
        `a memory log has nothing to read once its process is gone: a log to read must be { kind: 'file', dir } or { kind: 'kafka', brokers, topic }`,
      );
  }
}

/** The options each backend takes: a misspelt one is refused, not ignored. */
const OPTIONS = new Map<string, readonly string[]>([
  ['memory', ['kind']],
  ['file', ['kind', 'dir', 'fsync']],
  ['kafka', ['kind', 'brokers', 'topic', 'clientId', 'replicationFactor', 'topicConfig', 'transactionTimeoutMs', 'tailWaitMs']],
]);

const EXPECTED = `{ kind: 'memory' }, { kind: 'file', dir } or { kind: 'kafka', brokers, topic }`;

/** The configuration read once into a copy: a plain object naming a backend, with only that backend's options. */
function readConfig(given: unknown): LogConfig {
  const config = requireObject('log', given);
  const allowed = typeof config.kind === 'string' ? OPTIONS.get(config.kind) : undefined;
  if (allowed === undefined) throw invalidArgument(`log must be ${EXPECTED}, got ${describe(config)}`);
  rejectUnknownKeys(`the ${config.kind as string} log`, Object.keys(config), allowed);
  return config as LogConfig;
}
