/**
 * Which events a reader asked for (the command line's tail and export, the server's event
 * stream): by tenant, thread and entry, all that are given. Events about a partition
 * rather than an entry (EntriesPruned, TicketKeyCreated: empty tenant and thread) match
 * no tenant or thread filter; an EntriesPruned matches an entry filter naming one of its ids.
 */
import type { RunlogEvent } from './types.ts';

export interface EventFilter {
  tenant?: string;
  thread?: string;
  entry?: string;
}

export function matchesFilter(event: RunlogEvent, filter: EventFilter): boolean {
  if (filter.tenant !== undefined && event.tenant !== filter.tenant) return false;
  if (filter.thread !== undefined && event.thread !== filter.thread) return false;
  if (filter.entry === undefined) return true;
  return event.type === 'EntriesPruned' ? event.entryIds.includes(filter.entry) : event.entryId === filter.entry;
}
