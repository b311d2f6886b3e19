/**
 * The queue's view of a partition as it was at a point of the log (`runlog state --at`): the
 * shipped queueViewProjection (the queue's own fold) run with `until`, up to and including the
 * record at a given offset, or up to the last event stamped at or before a time (the first
 * later event ends it; a tombstone before it is folded).
 */
import { isoTime } from './iso-time.ts';
import type { EventLog } from '../log/event-log.ts';
import { runProjection } from '../projector/run-projection.ts';
import type { LogPoint } from '../projector/run-options.ts';
import type { PartitionView } from '../../projections/partition-view.ts';
import type { ClosedEntry } from '../../projections/closed-entry.ts';
import type { EntryState } from '../../projections/entry-state.ts';
import { defineProjection, type Projection } from '../../projections/projection.ts';
import { queueViewProjection } from '../../projections/queue-view.ts';
import { UsageError } from './command.ts';

/** Where to stop: a time (epoch ms), or the last offset to fold of each partition (null: none of it). */
export type StatePoint = { kind: 'time'; at: number } | { kind: 'offsets'; through: readonly (bigint | null)[] };

export interface FoldedPartition {
  view: PartitionView;
  /** The offset of the last record folded (null: none). */
  through: bigint | null;
  /** The entry asked for as it stood when last folded (kept even once the view lets it go: a copy once closed). */
  watched: EntryState | ClosedEntry | undefined;
}

interface Watching {
  view: PartitionView;
  watched: EntryState | ClosedEntry | undefined;
}

export async function foldUntil(
  log: EventLog,
  partition: number,
  point: StatePoint,
  watch: string | null = null,
): Promise<FoldedPartition> {
  const { state } = await runProjection(log, watching(partition, watch), { partitions: [partition], until: untilOf(point, partition) });
  const last = state.view.nextOffset - 1n;
  return { view: state.view, through: last < 0n ? null : last, watched: state.watched };
}

/** Where runProjection stops: before the offset after the last one folded, or after `at` (a time before 1970: before everything). */
function untilOf(point: StatePoint, partition: number): LogPoint {
  if (point.kind === 'time') return point.at < 0 ? { offset: 0n } : { at: point.at };
  const last = point.through[partition]!;
  return { offset: last === null ? 0n : last + 1n };
}

/** The queue's view of `partition`, and the entry `watch` as it stood when last folded. */
function watching(partition: number, watch: string | null): Projection<Watching> {
  const queueView = queueViewProjection(partition);
  return defineProjection<Watching>({
    name: `state-at-${partition}`,
    initial: () => {
      const view = queueView.initial();
      view.watchedEntryId = watch; // kept whole as it closes (PartitionView.watchedClose)
      return { view, watched: undefined };
    },
    evolve: (state, event, position) => {
      queueView.evolve(state.view, event, position);
      if (watch !== null && 'entryId' in event && event.entryId === watch)
        state.watched = state.view.entries.get(watch) ?? state.view.watchedClose ?? state.watched;
      return state;
    },
    tombstone: (state, key, position) => (queueView.tombstone!(state.view, key, position), state),
  });
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
  const at = /^\d{1,16}$/.test(text) ? Number(text) : isoTime(text);
  if (!Number.isSafeInteger(at))
    throw new UsageError(
      `--at must be a time (epoch ms, or an ISO date-time with its zone: 2026-12-01T06:00:00Z) or @OFFSET / @a,b,..., got ${JSON.stringify(text)}`,
    );
  return { kind: 'time', at };
}
