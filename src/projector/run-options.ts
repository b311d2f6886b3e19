/** The options of runProjection, read once and checked (InvalidArgument naming the bad value, before anything is read). */
import { invalidArgument } from '../errors.ts';
import type { WarningListener } from '../warnings.ts';
import {
  describe,
  optionalFunction,
  optionalOptions,
  optionalSignal,
  readArray,
  requireBoolean,
  requireInteger,
  requireObject,
  requireOneOf,
} from '../validation/index.ts';
import type { CheckpointStore } from './checkpoint-store.ts';
import type { ProjectionResult } from './projection-result.ts';

/** Where a run starts or stops: an offset (one for every partition run, or one per partition), or a store-clock time (epoch ms). */
export type LogPoint = { offset: bigint | readonly bigint[] } | { at: number };

export type RunOrder = 'partition' | 'time';

export interface RunOptions<S> {
  /** Where a fresh fold starts (default: the beginning). A resumed one starts at its checkpoint. */
  from?: LogPoint;
  /** Where the fold stops: before this offset, or before the first event stamped after this time. */
  until?: LogPoint;
  /** Follow the tail, folding records as they are appended, until this signal aborts (or `until` is reached). */
  follow?: AbortSignal;
  /** The partitions to fold (default: all), each in offset order. */
  partitions?: readonly number[];
  /** 'partition' (default): one partition after another; 'time': merged by event time (ties: partition, then offset). */
  order?: RunOrder;
  /** Where the position and state are kept, so that the next run resumes. */
  checkpoints?: CheckpointStore;
  /** Ignore the checkpoint: fold from `from` and checkpoint anew. */
  rebuild?: boolean;
  /** Records folded between checkpoints while running (default 10,000); a run also checkpoints when it ends. */
  checkpointEvery?: number;
  /**
   * Called after each batch folded with the result so far (the live state: read it, do not keep it),
   * and, when following, once caught up (`caughtUp` true) before waiting for new records.
   */
  onUpdate?: (result: ProjectionResult<S>) => void;
  /** Hears why a checkpoint was not resumed (default: process.emitWarning). */
  onWarning?: WarningListener;
}

/** A LogPoint resolved against the partitions run: an offset for each, or a time. */
export type Point = { kind: 'offsets'; offsets: Map<number, bigint> } | { kind: 'at'; at: number };

export interface CheckedRunOptions<S> {
  from: Point | null;
  until: Point | null;
  follow: AbortSignal | null;
  partitions: number[];
  order: RunOrder;
  checkpoints: CheckpointStore | null;
  rebuild: boolean;
  checkpointEvery: number;
  onUpdate: ((result: ProjectionResult<S>) => void) | null;
  onWarning: WarningListener | null;
}

const KEYS = [
  'from',
  'until',
  'follow',
  'partitions',
  'order',
  'checkpoints',
  'rebuild',
  'checkpointEvery',
  'onUpdate',
  'onWarning',
] as const;
export const DEFAULT_CHECKPOINT_EVERY = 10_000;

export function checkRunOptions<S>(value: unknown, partitionCount: number): CheckedRunOptions<S> {
  const given = optionalOptions('runProjection options', value, KEYS);
  const partitions = given.partitions === undefined ? [...Array(partitionCount).keys()] : partitionList(given.partitions, partitionCount);
  return {
    from: given.from === undefined ? null : logPoint('from', given.from, partitions),
    until: given.until === undefined ? null : logPoint('until', given.until, partitions),
    follow: optionalSignal('follow', given.follow) ?? null,
    partitions,
    order: given.order === undefined ? 'partition' : requireOneOf('order', given.order, ['partition', 'time'] as const),
    checkpoints: given.checkpoints === undefined ? null : checkpointStore(given.checkpoints),
    rebuild: given.rebuild === undefined ? false : requireBoolean('rebuild', given.rebuild),
    checkpointEvery:
      given.checkpointEvery === undefined ? DEFAULT_CHECKPOINT_EVERY : requireInteger('checkpointEvery', given.checkpointEvery, 1),
    onUpdate: optionalFunction<(result: ProjectionResult<S>) => void>('onUpdate', given.onUpdate) ?? null,
    onWarning: optionalFunction<WarningListener>('onWarning', given.onWarning) ?? null,
  };
}

function partitionList(value: unknown, partitionCount: number): number[] {
  const items = readArray('partitions', value, 'a non-empty array of partition numbers');
  if (items.length === 0) throw invalidArgument(`partitions must be a non-empty array of partition numbers, got ${describe(value)}`);
  const partitions = items.map((item, i) => requireInteger(`partitions[${i}]`, item, 0, partitionCount - 1));
  if (new Set(partitions).size !== partitions.length)
    throw invalidArgument(`partitions must not repeat a partition, got ${describe(value)}`);
  return partitions.sort((a, b) => a - b);
}

function logPoint(name: string, value: unknown, partitions: readonly number[]): Point {
  const point = requireObject(name, value);
  const keys = Object.keys(point);
  if (keys.length !== 1 || (keys[0] !== 'offset' && keys[0] !== 'at')) {
    throw invalidArgument(`${name} must be { offset } or { at }, got ${describe(value)}`);
  }
  if (point.at !== undefined) return { kind: 'at', at: requireInteger(`${name}.at`, point.at, 0) };
  return { kind: 'offsets', offsets: offsetsOf(`${name}.offset`, point.offset, partitions) };
}

/** One offset for every partition run, or an array with one per partition run (in the order of `partitions`, ascending). */
function offsetsOf(name: string, value: unknown, partitions: readonly number[]): Map<number, bigint> {
  if (typeof value === 'bigint') return new Map(partitions.map((p) => [p, offset(name, value)]));
  const items = readArray(name, value, 'a bigint, or an array of bigints one per partition run');
  if (items.length !== partitions.length) {
    throw invalidArgument(`${name} must hold one offset per partition run (${partitions.length}), got ${describe(value)}`);
  }
  return new Map(partitions.map((p, i) => [p, offset(`${name}[${i}]`, items[i])]));
}

function offset(name: string, value: unknown): bigint {
  if (typeof value !== 'bigint' || value < 0n) throw invalidArgument(`${name} must be a non-negative bigint, got ${describe(value)}`);
  return value;
}

function checkpointStore(value: unknown): CheckpointStore {
  const store = value as Partial<CheckpointStore> | null;
  const ok = typeof store === 'object' && store !== null && typeof store.load === 'function' && typeof store.save === 'function';
  if (!ok)
    throw invalidArgument(
      `checkpoints must be a CheckpointStore (fileCheckpoints, kafkaCheckpoints, memoryCheckpoints), got ${describe(value)}`,
    );
  return value as CheckpointStore;
}
