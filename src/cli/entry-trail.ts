/**
 * The audit trail of one entry, read from the log: every event about it, in log order
 * (an EntriesPruned naming it included). The ticket names its partition, so only that
 * partition is read, from the start: a tool for people and audits, not a hot path. The
 * tenant is found from the ticket's own events when the caller does not give it.
 */
import { decodeEvent } from '../events/codec.ts';
import type { RunlogEvent } from '../events/types.ts';
import type { EventLog } from '../log/event-log.ts';
import { parseEntryId } from '../queue/entry-id.ts';
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

/** The trail of `entryId` (of `tenant` when given: another tenant's events are left out). */
export async function readEntryTrail(log: EventLog, entryId: string, tenant: string | null = null): Promise<EntryTrail> {
  const parsed = parseEntryId(entryId, log.partitions);
  if (parsed === null) throw new RunlogError('TicketNotFound', `ticket ${describe(entryId)} was never issued`);
  const items: HistoryItem[] = [];
  let owner = tenant;
  for await (const record of log.read(parsed.partition, 0n)) {
    if (record.value === null) continue;
    const event = decodeEvent(record.value);
    if (!isAbout(event, entryId) || (owner !== null && event.tenant !== '' && event.tenant !== owner)) continue;
    if (owner === null && event.tenant !== '') owner = event.tenant;
    items.push({ partition: parsed.partition, offset: record.offset, event });
  }
  // An EntriesPruned (no tenant) alone says nothing of whose ticket it was.
  const named = items.some(({ event }) => event.tenant !== '');
  return { entryId, partition: parsed.partition, tenant: owner, items: named ? items : [] };
}

function isAbout(event: RunlogEvent, entryId: string): boolean {
  if (event.type === 'EntriesPruned') return event.entryIds.includes(entryId);
  return event.entryId === entryId;
}
