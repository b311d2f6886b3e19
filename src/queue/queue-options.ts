/** The RunQueue's options, checked: bad values are InvalidArgument naming them. */
import { invalidArgument } from '../errors.ts';
import type { EventLog } from '../log/event-log.ts';
import { WarningCounter, type WarningListener } from '../warnings.ts';
import { DEFAULT_SNAPSHOT_SETTINGS, type SnapshotSettings } from './snapshot-keeper.ts';
import type { StoreClockSources } from './store-clock.ts';
import { DEFAULT_CLOSED_CACHE_BYTES } from './closed-entries.ts';
import type { Capacity, Clock, Retention } from './types.ts';
import { describe, optionalFunction, orDefault, requireInteger, requireObject, requireTimerMs } from '../validation/index.ts';

export const DEFAULT_MAX_INPUT_BYTES = 1024 * 1024;
const MAX_MAX_INPUT_BYTES = 64 * 1024 * 1024;

/**
 * What a record keeps of the log's record limit for everything beside an input (or a
 * result): a Submitted event's names (4 x 1024 characters, up to 12 KiB of UTF-8), its
 * metadata (METADATA_LIMITS: 16 KiB) and fixed fields fit in it, so a submit whose fields
 * are within their limits always fits the log. A close with both a result of maxInputBytes
 * and a long error may not: record-bounds.ts refuses it.
 */
export const RECORD_HEADROOM_BYTES = 32 * 1024;

export const DEFAULT_CLOCK_STEP_TOLERANCE_MS = 1_000;

/** The options a queue over an opened log takes (openRunQueueOnLog). */
export const QUEUE_SETTING_KEYS = [
  'clock',
  'monotonicClock',
  'clockStepToleranceMs',
  'onWarning',
  'capacity',
  'maxInputBytes',
  'retention',
  'ownership',
  'snapshots',
  'closedCacheBytes',
] as const;
/** The options of openRunQueue: the log to open, and the queue's own. */
export const QUEUE_OPTION_KEYS = ['log', 'partitions', ...QUEUE_SETTING_KEYS] as const;

type SettingsBody = Partial<Record<(typeof QUEUE_SETTING_KEYS)[number], unknown>>;

export interface QueueSettings {
  clock: StoreClockSources;
  capacity: Capacity;
  /** As asked; null: derived from the log (inputLimit). */
  maxInputBytes: number | null;
  retention: Required<Retention> | null;
  /** Where warnings go (options.onWarning, default process.emitWarning), counted for metrics(). */
  warnings: WarningCounter;
  /** 'all': the queue claims every partition at open; 'assigned': none until acquire() (a cluster node). */
  ownership: Ownership;
  /** When views are snapshotted (null: never; snapshot-keeper.ts). */
  snapshots: SnapshotSettings | null;
  /** The bytes of closed entries kept whole in memory (closed-entries.ts); 0: none, each read goes to the log. */
  closedCacheBytes: number;
}

export type Ownership = 'all' | 'assigned';

/** Reads the options once (a plain object of QUEUE_SETTING_KEYS) and checks every value. */
export function checkQueueOptions(options: unknown): QueueSettings {
  return queueSettings(requireObject('options', options, QUEUE_SETTING_KEYS));
}

/** Checks every value of options read once already (openRunQueue reads them with the log's keys). */
export function queueSettings(body: SettingsBody): QueueSettings {
  const maxInputBytes =
    body.maxInputBytes === undefined ? null : requireInteger('maxInputBytes', body.maxInputBytes, 1, MAX_MAX_INPUT_BYTES);
  const warnings = new WarningCounter(optionalFunction<WarningListener>('onWarning', body.onWarning));
  return {
    clock: clockOptions(body),
    capacity: capacityOption(body.capacity),
    maxInputBytes,
    retention: retentionOption(body.retention),
    warnings,
    ownership: ownershipOption(body.ownership),
    snapshots: snapshotsOption(body.snapshots),
    closedCacheBytes: requireInteger('closedCacheBytes', orDefault(body.closedCacheBytes, DEFAULT_CLOSED_CACHE_BYTES), 0),
  };
}

/** `false`: no snapshots; else a plain object of `everyRecords` and `everyMs` (each defaulted: snapshot-keeper.ts). */
function snapshotsOption(snapshots: unknown): SnapshotSettings | null {
  if (snapshots === false) return null;
  if (snapshots === undefined) return DEFAULT_SNAPSHOT_SETTINGS;
  const body = requireObject('snapshots', snapshots, ['everyRecords', 'everyMs']);
  return {
    everyRecords: requireInteger('snapshots.everyRecords', orDefault(body.everyRecords, DEFAULT_SNAPSHOT_SETTINGS.everyRecords), 1),
    everyMs: requireTimerMs('snapshots.everyMs', orDefault(body.everyMs, DEFAULT_SNAPSHOT_SETTINGS.everyMs), 1),
  };
}

/** A lone `clock` (a test's fake wall clock) is the monotonic source too: it never steps against itself. */
function clockOptions(body: SettingsBody): StoreClockSources {
  const wall = optionalFunction<Clock>('clock', body.clock);
  const monotonic = optionalFunction<Clock>('monotonicClock', body.monotonicClock);
  return {
    wall: wall ?? Date.now,
    monotonic: monotonic ?? wall ?? (() => performance.now()),
    stepToleranceMs: requireInteger(
      'clockStepToleranceMs',
      orDefault(body.clockStepToleranceMs, DEFAULT_CLOCK_STEP_TOLERANCE_MS),
      10,
      86_400_000,
    ),
  };
}

/**
 * The largest input (or result) a queue over `log` accepts: `asked`, if a record with that
 * much input fits the log's record limit beside RECORD_HEADROOM_BYTES (else InvalidArgument);
 * not asked, DEFAULT_MAX_INPUT_BYTES, or less where the log takes smaller records (a Kafka
 * topic's max.message.bytes is 1 MiB by default).
 */
export function inputLimit(asked: number | null, log: Pick<EventLog, 'kind' | 'maxRecordBytes'>): number {
  const fits = log.maxRecordBytes - RECORD_HEADROOM_BYTES;
  const limit = `the ${log.kind} log takes records of at most ${log.maxRecordBytes} bytes, and a record keeps ${RECORD_HEADROOM_BYTES} of them for its other fields`;
  if (asked === null) {
    if (fits < 1) throw invalidArgument(`no input fits: ${limit}`);
    return Math.min(DEFAULT_MAX_INPUT_BYTES, fits);
  }
  if (asked > fits)
    throw invalidArgument(`maxInputBytes ${asked} does not fit: ${limit}, so maxInputBytes may be at most ${Math.max(0, fits)}`);
  return asked;
}

function ownershipOption(ownership: unknown): Ownership {
  if (ownership === undefined || ownership === 'all' || ownership === 'assigned') return ownership ?? 'all';
  throw invalidArgument(`ownership must be 'all' or 'assigned', got ${describe(ownership)}`);
}

function retentionOption(retention: unknown): Required<Retention> | null {
  return retention === undefined ? null : checkRetention(retention);
}

/** The retention option (or startSweeping's argument): a plain object of a lifetime, a timer period and a limit. */
export function checkRetention(retention: unknown): Required<Retention> {
  const body = requireObject('retention', retention, ['ticketLifetimeMs', 'everyMs', 'limit']);
  return {
    ticketLifetimeMs: requireInteger('retention.ticketLifetimeMs', body.ticketLifetimeMs, 0),
    everyMs: requireTimerMs('retention.everyMs', orDefault(body.everyMs, 60_000), 1),
    limit: requireInteger('retention.limit', orDefault(body.limit, 10_000), 1),
  };
}

function capacityOption(capacity: unknown): Capacity {
  if (capacity === undefined) return {};
  const body = requireObject('capacity', capacity, ['perTenant', 'total']);
  const result: Capacity = {};
  if (body.perTenant !== undefined) result.perTenant = requireInteger('capacity.perTenant', body.perTenant, 1);
  if (body.total !== undefined) result.total = requireInteger('capacity.total', body.total, 1);
  return result;
}
