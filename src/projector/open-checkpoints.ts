/** The checkpoint store beside the log a configuration names: memory, a file log's directory, or a Kafka topic's `<topic>.projections`. */
import type { LogConfig } from '../log/event-log.ts';
import { requireObject } from '../validation/index.ts';
import { invalidArgument } from '../errors.ts';
import { describe } from '../describe.ts';
import { memoryCheckpoints, type CheckpointStore } from './checkpoint-store.ts';
import { fileCheckpoints } from './file-checkpoints.ts';
import { kafkaCheckpoints } from './kafka-checkpoints.ts';

export async function openCheckpoints(config: LogConfig): Promise<CheckpointStore> {
  const given = requireObject('log', config);
  switch (given.kind) {
    case 'memory':
      return memoryCheckpoints();
    case 'file':
      return fileCheckpoints(given.dir as string);
    case 'kafka': {
      const { brokers, topic, clientId } = given as Partial<Extract<LogConfig, { kind: 'kafka' }>>;
      return kafkaCheckpoints({ brokers: brokers!, topic: topic!, ...(clientId === undefined ? {} : { clientId }) });
    }
    default:
      throw invalidArgument(
        `log must be { kind: 'memory' }, { kind: 'file', dir } or { kind: 'kafka', brokers, topic }, got ${describe(config)}`,
      );
  }
}
