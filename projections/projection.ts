/**
 * A projection: a name, an initial state and a fold of the log's events into it. Pure: the
 * projector (src/projector/run-projection.ts) reads the log, decodes each record through the
 * codec (so records of older schema versions arrive in the newest shape) and calls `evolve`;
 * it also keeps the projection's position and state in a checkpoint, so a restart resumes.
 *
 * `evolve` may change the state it is given and return it, or return a new one. It must be
 * a function of (state, event, position) alone: no clock, no I/O, no randomness, so that
 * folding the same records always gives the same state (a rebuild, a resumed run).
 */
import { invalidArgument } from '../src/errors.ts';
import { EVENT_TYPES, type EventType, type RunlogEvent } from '../src/events/types.ts';
import {
  describe,
  optionalFunction,
  optionalOptions,
  readArray,
  requireFunction,
  requireInteger,
  requireObject,
} from '../src/validation/index.ts';

/** Where a record lies in the log. */
export interface RecordPosition {
  partition: number;
  offset: bigint;
  /** The record's key (src/events/keys.ts): what compaction keeps the latest of. */
  key: string;
}

/** How a state is written into a checkpoint and read back. */
export interface StateCodec<S> {
  encode(state: S): Uint8Array;
  decode(bytes: Uint8Array): S;
}

export interface ProjectionDefinition<S> {
  /** Names the projection and its checkpoint: letters, digits, `.`, `_`, `-`, at most 100, not starting with `.`, `_` or `-`. */
  name: string;
  /** Bumped when evolve changes meaning: a checkpoint of another version is not resumed (the fold starts over). Default 1. */
  version?: number;
  initial: () => S;
  evolve: (state: S, event: RunlogEvent, position: RecordPosition) => S;
  /** The event types evolve is given; others are skipped. Default: every type. */
  handles?: readonly EventType[];
  /** Folds a tombstone (retention removed what `key` named). Default: tombstones are skipped. */
  tombstone?: (state: S, key: string, position: RecordPosition) => S;
  /** How checkpoints store the state. Default: v8.serialize (plain objects, arrays, Map, Set, bigint, Uint8Array, Date). */
  stateCodec?: StateCodec<S>;
}

export interface Projection<S> {
  readonly name: string;
  readonly version: number;
  readonly initial: () => S;
  readonly evolve: (state: S, event: RunlogEvent, position: RecordPosition) => S;
  /** null: every type. */
  readonly handles: ReadonlySet<EventType> | null;
  readonly tombstone: ((state: S, key: string, position: RecordPosition) => S) | null;
  readonly stateCodec: StateCodec<S> | null;
}

/** The projections defineProjection made (what a runner accepts). */
const defined = new WeakSet<object>();

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;
const KEYS = ['name', 'version', 'initial', 'evolve', 'handles', 'tombstone', 'stateCodec'] as const;

/** Checks a definition (InvalidArgument naming what is wrong) and answers the projection. */
export function defineProjection<S>(definition: ProjectionDefinition<S>): Projection<S> {
  const given = requireObject('projection', definition, KEYS);
  const projection: Projection<S> = Object.freeze({
    name: projectionName(given.name),
    version: given.version === undefined ? 1 : requireInteger('projection version', given.version, 1),
    initial: requireFunction<() => S>('projection initial', given.initial),
    evolve: requireFunction<Projection<S>['evolve']>('projection evolve', given.evolve),
    handles: given.handles === undefined ? null : eventTypes(given.handles),
    tombstone: optionalFunction<NonNullable<Projection<S>['tombstone']>>('projection tombstone', given.tombstone) ?? null,
    stateCodec: given.stateCodec === undefined ? null : stateCodec<S>(given.stateCodec),
  });
  defined.add(projection);
  return projection;
}

/** `value` as a projection defineProjection made, else InvalidArgument. */
export function checkProjection<S>(value: Projection<S>): Projection<S> {
  if (typeof value !== 'object' || value === null || !defined.has(value)) {
    throw invalidArgument(`projection must be made by defineProjection, got ${describe(value)}`);
  }
  return value;
}

export function projectionName(value: unknown): string {
  if (typeof value !== 'string' || !NAME.test(value)) {
    throw invalidArgument(
      `projection name must be 1 to 100 letters, digits, '.', '_' or '-', starting with a letter or digit, got ${describe(value)}`,
    );
  }
  return value;
}

function eventTypes(value: unknown): ReadonlySet<EventType> {
  const types = readArray('projection handles', value, 'an array of event types');
  types.forEach((type, i) => {
    if (!EVENT_TYPES.includes(type as EventType)) {
      throw invalidArgument(`projection handles[${i}] must be one of ${EVENT_TYPES.join(', ')}, got ${describe(type)}`);
    }
  });
  return new Set(types as EventType[]);
}

function stateCodec<S>(value: unknown): StateCodec<S> {
  const codec = optionalOptions('projection stateCodec', value, ['encode', 'decode']);
  return {
    encode: requireFunction<StateCodec<S>['encode']>('projection stateCodec.encode', codec.encode),
    decode: requireFunction<StateCodec<S>['decode']>('projection stateCodec.decode', codec.decode),
  };
}
