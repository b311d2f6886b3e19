/**
 * The queue's view of a partition as it was at a point of the log (`runlog state --at`):
 * the records folded, in order, up to and including the record at a given offset, or up
 * to the last event stamped at or before a time (the store clock only moves forward within a
 * partition, so the first later event ends it; a tombstone before it is folded).
 */
import { decodeEvent } from '../events/codec.ts';
import type { EventLog } from '../log/event-log.ts';
import { PartitionView } from '../../projections/partition-view.ts';
import type { EntryState } from '../../projections/entry-state.ts';
import { UsageError } from './command.ts';

/** Where to stop: a time (epoch ms), or the last offset to fold of each partition (null: none of it). */
export type StatePoint = { kind: 'time'; at: number } | { kind: 'offsets'; through: readonly (bigint | null)[] };

export interface FoldedPartition {
  view: PartitionView;
  /** The offset of the last record folded (null: none). */
  through: bigint | null;
  /** The entry asked for as it stood when last folded (kept even once the view lets it go). */
  watched: EntryState | undefined;
}

export async function foldUntil(
  log: EventLog,
  partition: number,
  point: StatePoint,
  watch: string | null = null,
): Promise<FoldedPartition> {
  const view = new PartitionView(partition);
  const last = point.kind === 'offsets' ? point.through[partition]! : undefined;
  let through: bigint | null = null;
  let watched: EntryState | undefined;
  if (last === null) return { view, through, watched };
  for await (const record of log.read(partition, 0n)) {
    if (last !== undefined && record.offset > last) break;
    const event = record.value === null ? null : decodeEvent(record.value);
    if (point.kind === 'time' && event !== null && event.at > point.at) break;
    view.apply(record.offset, record.key, event);
    through = record.offset;
    if (watch !== null && event !== null && 'entryId' in event && event.entryId === watch) watched = view.entries.get(watch) ?? watched;
  }
  return { view, through, watched };
}

/**
 * `--at`: a time (epoch ms, or an ISO date-time with its zone), or `@OFFSET` (one partition:
 * --partition, or a log of one) or `@a,b,...` (one offset per partition), each the last
 * offset folded, as history prints them.
 */
export function statePointOf(text: string, partitions: number, partition: number | undefined): StatePoint {
  const point = parseStatePoint(text);
  if (point.kind === 'time') return point;
  const offsets = point.offsets;
  if (offsets.length === 1 && (partition !== undefined || partitions === 1))
    return { kind: 'offsets', through: Array.from({ length: partitions }, (_, p) => (p === (partition ?? 0) ? offsets[0]! : null)) };
  if (offsets.length !== partitions) {
    const needs = offsets.length === 1 ? 'OFFSET needs --partition' : `a,b,... needs ${partitions} offsets, one per partition`;
    throw new UsageError(`--at @${needs} (the log has ${partitions} partitions), got ${JSON.stringify(text)}`);
  }
  return { kind: 'offsets', through: offsets };
}

/** `--at`'s syntax alone (checked before the log is opened). */
export function parseStatePoint(text: string): { kind: 'time'; at: number } | { kind: 'offsets'; offsets: bigint[] } {
  if (text.startsWith('@')) {
    const offsets = text.slice(1).split(',');
    if (!offsets.every((offset) => /^\d{1,19}$/.test(offset)))
      throw new UsageError(`--at @ takes offsets: @OFFSET or @a,b,... (one per partition), got ${JSON.stringify(text)}`);
    return { kind: 'offsets', offsets: offsets.map((offset) => BigInt(offset)) };
  }
  const at = /^\d{1,16}$/.test(text)
    ? Number(text)
    : /^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d:\d\d)$/.test(text)
      ? Date.parse(text)
      : Number.NaN;
  if (!Number.isSafeInteger(at))
    throw new UsageError(
      `--at must be a time (epoch ms, or an ISO date-time with its zone: 2026-12-01T06:00:00Z) or @OFFSET / @a,b,..., got ${JSON.stringify(text)}`,
    );
  return { kind: 'time', at };
}
