/**
 * The audit trail of one entry, read from the log: every event about it, in log order
 * (an EntriesPruned naming it included): the shipped entryTimeline projection. The ticket
 * names its partition, so only that partition is read, from the start: a tool for people and
 * audits, not a hot path. The tenant is found from the ticket's own events when the caller
 * does not give it (the first event naming a tenant; another tenant's events are left out).
 */
import type { RunlogEvent } from '../events/types.ts';
import type { EventLog } from '../log/event-log.ts';
import { runProjection } from '../projector/run-projection.ts';
import { issuedTickets, type IssuedTickets } from '../../projections/issued-tickets.ts';
import { defineProjection, type Projection } from '../../projections/projection.ts';
import { entryTimeline, type TimelineItem } from '../../projections/timeline.ts';
import { parseEntryId, wasIssued } from '../queue/entry-id.ts';
import { RunlogError } from '../errors.ts';
import { describe } from '../validation/index.ts';

export interface HistoryItem {
  partition: number;
  offset: bigint;
  event: RunlogEvent;
}

export interface EntryTrail {
  entryId: string;
  partition: number;
  /** The entry's tenant: the one asked for, else the one its events name (null: no event names it). */
  tenant: string | null;
  items: HistoryItem[];
}

/**
 * The trail of `entryId` (of `tenant` when given: another tenant's events are left out). A ticket
 * its partition never issued (made up or altered: its key never made it, or past the seqs issued)
 * is TicketNotFound; one issued whose events are all gone (pruned and compacted away) or another
 * tenant's has an empty trail, as the queue answers TicketExpired for both.
 */
export async function readEntryTrail(log: EventLog, entryId: string, tenant: string | null = null): Promise<EntryTrail> {
  const parsed = parseEntryId(entryId, log.partitions);
  if (parsed === null) throw new RunlogError('TicketNotFound', `ticket ${describe(entryId)} was never issued`);
  const timeline = entryTimeline(tenant === null ? { entryId } : { entryId, tenant });
  const { state } = await runProjection(log, withIssuedTickets(timeline), { partitions: [parsed.partition] });
  const owner = tenant ?? state.items.find(({ event }) => event.tenant !== '')?.event.tenant ?? null;
  const items = state.items
    .filter(({ event }) => event.tenant === '' || event.tenant === owner)
    .map(({ partition, offset, event }): HistoryItem => ({ partition, offset, event }));
  // An EntriesPruned (no tenant) alone says nothing of whose ticket it was.
  const named = items.some(({ event }) => event.tenant !== '');
  if (!named && state.items.length === 0 && !wasIssued(entryId, parsed.partition, state.issued))
    throw new RunlogError('TicketNotFound', `ticket ${describe(entryId)} was never issued`);
  return { entryId, partition: parsed.partition, tenant: owner, items: named ? items : [] };
}

/** `timeline` and the partition's issued tickets (issued-tickets.ts), in one read of the partition. */
function withIssuedTickets(timeline: Projection<TimelineItem[]>): Projection<{ items: TimelineItem[]; issued: IssuedTickets }> {
  const issued = issuedTickets();
  return defineProjection({
    name: 'entry-trail',
    initial: () => ({ items: timeline.initial(), issued: issued.initial() }),
    evolve: (state, event, position) => {
      state.items = timeline.evolve(state.items, event, position);
      state.issued = issued.evolve(state.issued, event, position);
      return state;
    },
  });
}
