/**
 * What a partition's log says of the tickets it issued: its ticket key and the highest seq
 * issued, folded as the queue's view folds them (partition-view.ts). With wasIssued
 * (src/events/entry-ids.ts) it tells a ticket that was issued, then pruned and compacted away,
 * from one never issued (made up or altered), with no memory per ticket: what `runlog history`
 * answers for a ticket none of whose events are left.
 */
import type { IssuedTickets } from '../src/events/entry-ids.ts';
import { defineProjection, type Projection } from './projection.ts';

export type { IssuedTickets } from '../src/events/entry-ids.ts';

export function issuedTickets(name = 'issued-tickets'): Projection<IssuedTickets> {
  return defineProjection<IssuedTickets>({
    name,
    initial: () => ({ ticketKey: null, issuedThrough: 0 }),
    evolve: (issued, event) => {
      if (event.type === 'Submitted' && event.seq > issued.issuedThrough) issued.issuedThrough = event.seq;
      else if (event.type === 'EntriesPruned' && event.issuedThrough > issued.issuedThrough) issued.issuedThrough = event.issuedThrough;
      else if (event.type === 'TicketKeyCreated') issued.ticketKey = { secret: event.secret, legacyThrough: event.legacyThrough };
      return issued;
    },
    handles: ['Submitted', 'EntriesPruned', 'TicketKeyCreated'],
  });
}
