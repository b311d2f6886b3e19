/** The RunQueue's options, checked: bad values are InvalidArgument naming them. */
import { RunlogError } from '../errors.ts';
import { WarningCounter } from '../warnings.ts';
import type { Capacity, Clock, Retention, RunQueueOptions } from './types.ts';
import { describe, rejectUnknownKeys, requireInteger, requireObject } from './validate.ts';

export const DEFAULT_MAX_INPUT_BYTES = 1024 * 1024;

export const QUEUE_OPTION_KEYS = ['log', 'partitions', 'clock', 'capacity', 'maxInputBytes', 'retention', 'onWarning'];

export interface QueueSettings {
  clock: Clock;
  capacity: Capacity;
  maxInputBytes: number;
  retention: Required<Retention> | null;
  /** Where warnings go (options.onWarning, default process.emitWarning), counted for metrics(). */
  warnings: WarningCounter;
}

export function checkQueueOptions(options: Omit<RunQueueOptions, 'log' | 'partitions'>): QueueSettings {
  const maxInputBytes = requireInteger('maxInputBytes', options.maxInputBytes ?? DEFAULT_MAX_INPUT_BYTES, 1, 64 * 1024 * 1024);
  const clock = options.clock ?? Date.now;
  if (typeof clock !== 'function') throw new RunlogError('InvalidArgument', `clock must be a function returning epoch ms, got ${typeof clock}`);
  const onWarning = options.onWarning;
  if (onWarning !== undefined && typeof onWarning !== 'function') throw new RunlogError('InvalidArgument', `onWarning must be a function, got ${describe(onWarning)}`);
  const warnings = new WarningCounter(onWarning);
  return { clock, capacity: capacityOption(options.capacity), maxInputBytes, retention: retentionOption(options.retention), warnings };
}

function retentionOption(retention: Retention | undefined): Required<Retention> | null {
  if (retention === undefined) return null;
  const body = requireObject('retention', retention);
  rejectUnknownKeys('retention', body, ['ticketLifetimeMs', 'everyMs', 'limit']);
  return {
    ticketLifetimeMs: requireInteger('retention.ticketLifetimeMs', retention.ticketLifetimeMs, 0),
    everyMs: requireInteger('retention.everyMs', retention.everyMs ?? 60_000, 1),
    limit: requireInteger('retention.limit', retention.limit ?? 10_000, 1),
  };
}

function capacityOption(capacity: Capacity | undefined): Capacity {
  if (capacity === undefined) return {};
  const body = requireObject('capacity', capacity);
  rejectUnknownKeys('capacity', body, ['perTenant', 'total']);
  const result: Capacity = {};
  if (capacity.perTenant !== undefined) result.perTenant = requireInteger('capacity.perTenant', capacity.perTenant, 1);
  if (capacity.total !== undefined) result.total = requireInteger('capacity.total', capacity.total, 1);
  return result;
}
