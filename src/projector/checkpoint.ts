/**
 * A projection's checkpoint: its state and the position it covers, with what says which
 * run it belongs to. A run resumes one only if it is of the same log, projection name and
 * version, partitions and order, its position is not past the log's end (a log replaced or
 * cut), and the log still holds, at each partition's last offset folded, the record that was
 * folded there (its anchor, as a snapshot's: src/log/record-anchor.ts), unless compaction
 * dropped it; otherwise it folds from the start and says why (a warning). The anchors tell a
 * log restored from an older copy and grown past the checkpoint since: its position is within
 * the log, over other records (the third tester: resumed without a warning, 616 and 1,529
 * records never folded).
 *
 * Stored with v8.serialize (the structured-clone format; newer Node versions read older
 * ones). The state inside is the projection's stateCodec's bytes, or v8.serialize's.
 */
import { deserialize, serialize } from 'node:v8';
import type { Projection } from '../../projections/projection.ts';
import type { RunOrder } from './run-options.ts';

const FORMAT = 'runlog-projection-checkpoint/1';

export interface Checkpoint {
  name: string;
  version: number;
  logId: string;
  order: RunOrder;
  partitions: number[];
  position: Map<number, bigint>;
  /** The latest store-clock time of an event folded into the state (0: none). */
  lastAt: number;
  /** Each partition's last record folded (absent in checkpoints saved before anchors: not checked). */
  anchors?: Map<number, CheckpointAnchor>;
  state: Uint8Array;
}

/** The last record a checkpoint folded of a partition: its offset and anchor. */
export interface CheckpointAnchor {
  offset: bigint;
  anchor: string;
}

export function encodeCheckpoint(checkpoint: Checkpoint): Uint8Array {
  return serialize({ format: FORMAT, ...checkpoint });
}

/** The checkpoint in `bytes`, or why they are not one. */
export function decodeCheckpoint(bytes: Uint8Array): Checkpoint | string {
  let value: unknown;
  try {
    value = deserialize(bytes);
  } catch (error) {
    return `it cannot be read (${(error as Error).message})`;
  }
  const c = value as Partial<Checkpoint> & { format?: unknown };
  if (typeof c !== 'object' || c === null || c.format !== FORMAT) return 'it is not a runlog projection checkpoint';
  const ok =
    typeof c.name === 'string' &&
    typeof c.version === 'number' &&
    typeof c.logId === 'string' &&
    (c.order === 'partition' || c.order === 'time') &&
    Array.isArray(c.partitions) &&
    c.position instanceof Map &&
    typeof c.lastAt === 'number' &&
    (c.anchors === undefined || c.anchors instanceof Map) &&
    c.state instanceof Uint8Array;
  return ok ? (c as Checkpoint) : 'it is damaged (a field is missing or of the wrong type)';
}

/** Why `checkpoint` cannot be resumed by this run, or null when it can. */
export function mismatchOf(checkpoint: Checkpoint, expected: Omit<Checkpoint, 'position' | 'state' | 'lastAt' | 'anchors'>): string | null {
  if (checkpoint.logId !== expected.logId) return `it is of another log (${checkpoint.logId}; this one is ${expected.logId})`;
  if (checkpoint.name !== expected.name) return `it is of projection ${checkpoint.name}`;
  if (checkpoint.version !== expected.version)
    return `it is of version ${checkpoint.version} (this projection is version ${expected.version})`;
  if (checkpoint.order !== expected.order) return `it was folded in ${checkpoint.order} order (this run asks for ${expected.order})`;
  if (checkpoint.partitions.join(',') !== expected.partitions.join(',')) {
    return `it covers partitions ${checkpoint.partitions.join(',')} (this run asks for ${expected.partitions.join(',')})`;
  }
  return null;
}

export function stateBytes<S>(projection: Projection<S>, state: S): Uint8Array {
  return projection.stateCodec === null ? serialize(state) : projection.stateCodec.encode(state);
}

export function stateOf<S>(projection: Projection<S>, bytes: Uint8Array): S {
  return projection.stateCodec === null ? (deserialize(bytes) as S) : projection.stateCodec.decode(bytes);
}
