/** The RunQueue's options, checked: bad values are InvalidArgument naming them. */
import { invalidArgument } from '../errors.ts';
import { WarningCounter } from '../warnings.ts';
import type { StoreClockSources } from './store-clock.ts';
import type { Capacity, Retention, RunQueueOptions } from './types.ts';
import { describe, rejectUnknownKeys, requireInteger, requireObject } from './validate.ts';

export const DEFAULT_MAX_INPUT_BYTES = 1024 * 1024;

export const DEFAULT_CLOCK_STEP_TOLERANCE_MS = 1_000;

export const QUEUE_OPTION_KEYS = [
  'log',
  'partitions',
  'clock',
  'monotonicClock',
  'clockStepToleranceMs',
  'onWarning',
  'capacity',
  'maxInputBytes',
  'retention',
];

export interface QueueSettings {
  clock: StoreClockSources;
  capacity: Capacity;
  maxInputBytes: number;
  retention: Required<Retention> | null;
  /** Where warnings go (options.onWarning, default process.emitWarning), counted for metrics(). */
  warnings: WarningCounter;
}

export function checkQueueOptions(options: Omit<RunQueueOptions, 'log' | 'partitions'>): QueueSettings {
  const maxInputBytes = requireInteger('maxInputBytes', options.maxInputBytes ?? DEFAULT_MAX_INPUT_BYTES, 1, 64 * 1024 * 1024);
  const warnings = new WarningCounter(optionalFunction('onWarning', options.onWarning));
  return {
    clock: clockOptions(options),
    capacity: capacityOption(options.capacity),
    maxInputBytes,
    retention: retentionOption(options.retention),
    warnings,
  };
}

/** A lone `clock` (a test's fake wall clock) is the monotonic source too: it never steps against itself. */
function clockOptions(options: Omit<RunQueueOptions, 'log' | 'partitions'>): StoreClockSources {
  const wall = optionalFunction('clock', options.clock);
  const monotonic = optionalFunction('monotonicClock', options.monotonicClock);
  return {
    wall: wall ?? Date.now,
    monotonic: monotonic ?? wall ?? (() => performance.now()),
    stepToleranceMs: requireInteger('clockStepToleranceMs', options.clockStepToleranceMs ?? DEFAULT_CLOCK_STEP_TOLERANCE_MS, 10, 86_400_000),
  };
}

function optionalFunction<T>(name: string, value: T | undefined): T | undefined {
  if (value !== undefined && typeof value !== 'function') throw invalidArgument(`${name} must be a function, got ${describe(value)}`);
  return value;
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
