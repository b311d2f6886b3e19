/**
 * Timelines: the events of one thread, or of one entry (a ticket), in log order, each with
 * where it lies and the time since the one before. What `runlog history` and the console's
 * timeline show. A thread lives in one partition (partitionOf(tenant, thread, partitions)),
 * an entry in the one its id starts with: run these with `partitions: [that one]`.
 */
import type { RunlogEvent } from '../src/events/types.ts';
import { optionalOptions, requireName } from '../src/validation/index.ts';
import { defineProjection, type Projection, type RecordPosition } from './projection.ts';

export interface TimelineItem {
  partition: number;
  offset: bigint;
  at: number;
  /** Since the item before (store-clock ms); null for the first. */
  sincePreviousMs: number | null;
  event: RunlogEvent;
}

function append(items: TimelineItem[], event: RunlogEvent, { partition, offset }: RecordPosition): TimelineItem[] {
  const previous = items[items.length - 1];
  items.push({ partition, offset, at: event.at, sincePreviousMs: previous === undefined ? null : event.at - previous.at, event });
  return items;
}

/** The events of `thread` of `tenant`. `name` names its checkpoint (default 'thread-timeline'). */
export function threadTimeline(options: { tenant: string; thread: string; name?: string }): Projection<TimelineItem[]> {
  const given = optionalOptions('threadTimeline options', options, ['tenant', 'thread', 'name']);
  const tenant = requireName('tenant', given.tenant);
  const thread = requireName('thread', given.thread);
  return defineProjection<TimelineItem[]>({
    name: given.name === undefined ? 'thread-timeline' : (given.name as string),
    initial: () => [],
    evolve: (items, event, position) => (event.tenant === tenant && event.thread === thread ? append(items, event, position) : items),
  });
}

/**
 * The events of entry `entryId` (its ticket id), and the EntriesPruned that pruned it; of
 * `tenant` only when given. `name` names its checkpoint (default 'entry-timeline').
 */
export function entryTimeline(options: { entryId: string; tenant?: string; name?: string }): Projection<TimelineItem[]> {
  const given = optionalOptions('entryTimeline options', options, ['entryId', 'tenant', 'name']);
  const entryId = requireName('entryId', given.entryId);
  const tenant = given.tenant === undefined ? null : requireName('tenant', given.tenant);
  const about = (event: RunlogEvent): boolean =>
    event.type === 'EntriesPruned'
      ? event.entryIds.includes(entryId)
      : event.entryId === entryId && (tenant === null || event.tenant === tenant);
  return defineProjection<TimelineItem[]>({
    name: given.name === undefined ? 'entry-timeline' : (given.name as string),
    initial: () => [],
    evolve: (items, event, position) => (about(event) ? append(items, event, position) : items),
  });
}
