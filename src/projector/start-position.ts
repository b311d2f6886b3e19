/**
 * Where a run starts: its checkpoint when there is one it may resume (checkpoint.ts says
 * which), else the projection's initial state at `from`. From a time, each partition starts
 * at its first event stamped at or after it, found by reading the partition from 0 (the log
 * keeps no index by time); a partition with none starts at its end as the run begins.
 */
import { invalidArgument } from '../errors.ts';
import { emitProcessWarning } from '../warnings.ts';
import { decodeEvent } from '../events/codec.ts';
import { batchesOf, type EventLog } from '../log/event-log.ts';
import type { Projection } from '../../projections/projection.ts';
import { recordAnchor } from '../log/record-anchor.ts';
import { decodeCheckpoint, mismatchOf, stateOf, type Checkpoint, type CheckpointAnchor } from './checkpoint.ts';
import type { CheckedRunOptions } from './run-options.ts';

export interface Start<S> {
  state: S;
  position: Map<number, bigint>;
  lastAt: number;
  resumed: boolean;
  /** The resumed checkpoint's anchors (empty when none). */
  anchors: ReadonlyMap<number, CheckpointAnchor>;
}

export const CHECKPOINT_IGNORED = 'RUNLOG_CHECKPOINT_IGNORED';

export async function startOf<S>(log: EventLog, projection: Projection<S>, options: CheckedRunOptions<S>): Promise<Start<S>> {
  if (options.checkpoints !== null && !options.rebuild) {
    const bytes = await options.checkpoints.load(projection.name);
    if (bytes !== null) {
      const resumed = await resume(log, projection, options, bytes);
      if (typeof resumed !== 'string') return resumed;
      const warn = options.onWarning ?? emitProcessWarning;
      warn({
        code: CHECKPOINT_IGNORED,
        message: `projection ${projection.name}: its checkpoint is not resumed, ${resumed}; folding from the start`,
      });
    }
  }
  return { state: projection.initial(), position: await fromPosition(log, options), lastAt: 0, resumed: false, anchors: new Map() };
}

/** The state and position `bytes` hold for this run, or why it may not resume them. */
async function resume<S>(
  log: EventLog,
  projection: Projection<S>,
  options: CheckedRunOptions<S>,
  bytes: Uint8Array,
): Promise<Start<S> | string> {
  const checkpoint = decodeCheckpoint(bytes);
  if (typeof checkpoint === 'string') return checkpoint;
  const expected = {
    name: projection.name,
    version: projection.version,
    logId: options.checkpoints!.logId,
    order: options.order,
    partitions: options.partitions,
  };
  const mismatch = mismatchOf(checkpoint, expected) ?? (await beyond(log, checkpoint, options)) ?? (await otherRecords(log, checkpoint));
  if (mismatch !== null) return mismatch;
  const anchors = checkpoint.anchors ?? new Map<number, CheckpointAnchor>();
  try {
    return {
      state: stateOf(projection, checkpoint.state),
      position: checkpoint.position,
      lastAt: checkpoint.lastAt,
      resumed: true,
      anchors,
    };
  } catch (error) {
    return `its state cannot be read (${(error as Error).message})`;
  }
}

/** Why the checkpoint covers more than this run may fold (past the log's end, or past `until`), or null. */
async function beyond<S>(log: EventLog, checkpoint: Checkpoint, options: CheckedRunOptions<S>): Promise<string | null> {
  const { until } = options;
  for (const p of options.partitions) {
    const at = checkpoint.position.get(p);
    if (at === undefined) return `it has no position for partition ${p}`;
    const end = await log.endOffset(p);
    if (at > end) return `it covers partition ${p} up to offset ${at}, past the log's end (${end}): the log was replaced or cut`;
    if (until?.kind === 'offsets' && at > until.offsets.get(p)!)
      return `it covers partition ${p} up to offset ${at}, past until (${until.offsets.get(p)})`;
  }
  if (until?.kind === 'at' && checkpoint.lastAt > until.at)
    return `it holds events stamped ${checkpoint.lastAt}, after until (${until.at})`;
  return null;
}

/**
 * Why the log holds other records than the checkpoint folded (a copy of it restored and grown
 * since), or null: each partition's last record folded is still the record at its offset, or
 * no longer in the log (compacted away: nothing to tell by).
 */
async function otherRecords(log: EventLog, checkpoint: Checkpoint): Promise<string | null> {
  for (const [partition, { offset, anchor }] of checkpoint.anchors ?? []) {
    const found = await recordAnchor(log, partition, offset);
    if (found !== null && found !== anchor)
      return `the record at offset ${offset} of partition ${partition} is not the one it folded there: the log was replaced by another copy of it`;
  }
  return null;
}

async function fromPosition<S>(log: EventLog, { from, partitions }: CheckedRunOptions<S>): Promise<Map<number, bigint>> {
  if (from === null) return new Map(partitions.map((p) => [p, 0n]));
  if (from.kind === 'offsets') return new Map(from.offsets);
  const position = new Map<number, bigint>();
  for (const p of partitions) position.set(p, await firstAtOrAfter(log, p, from.at));
  return position;
}

async function firstAtOrAfter(log: EventLog, partition: number, at: number): Promise<bigint> {
  let end = await log.endOffset(partition);
  for await (const batch of batchesOf(log.read(partition, 0n))) {
    for (const record of batch) {
      if (record.value !== null && decodeEvent(record.value).at >= at) return record.offset;
      if (record.offset >= end) end = record.offset + 1n;
    }
  }
  return end;
}

export function checkUntilAfterFrom<S>({ from, until }: CheckedRunOptions<S>): void {
  if (from?.kind === 'at' && until?.kind === 'at' && until.at < from.at)
    throw invalidArgument(`until.at (${until.at}) is before from.at (${from.at})`);
  if (from?.kind !== 'offsets' || until?.kind !== 'offsets') return;
  for (const [p, offset] of from.offsets) {
    if (until.offsets.get(p)! < offset)
      throw invalidArgument(`until.offset (${until.offsets.get(p)}) is before from.offset (${offset}) on partition ${p}`);
  }
}
