/**
 * Ticket (entry) ids as the queue takes them from callers: the id format itself (and why it
 * tells nothing of the sequence) is src/events/entry-ids.ts, which the view's fold reads too.
 */
import { randomFillSync } from 'node:crypto';
import { RunlogError, invalidArgument } from '../errors.ts';
import { describe } from '../validation/index.ts';
import { TICKET_SECRET_BYTES, parseEntryId } from '../events/entry-ids.ts';

export {
  TICKET_SECRET_BYTES,
  formatEntryId,
  parseEntryId,
  sequenceOf,
  wasIssued,
  type IssuedTickets,
  type ParsedEntryId,
} from '../events/entry-ids.ts';

/**
 * The partition an entry id argument names, for a lookup. Any string is looked up: one that
 * is no ticket id (or names a partition past `partitions`) was never issued, TicketNotFound;
 * anything else is a bad argument. The HTTP client, which does not know the partition count,
 * passes Infinity: it refuses what no server could have issued, as the queue would.
 */
export function partitionOfEntryId(entryId: unknown, partitions: number): number {
  if (typeof entryId !== 'string') throw invalidArgument(`entryId must be a string, got ${describe(entryId)}`);
  const parsed = parseEntryId(entryId, partitions);
  if (parsed === null) throw new RunlogError('TicketNotFound', `ticket ${describe(entryId)} was never issued`);
  return parsed.partition;
}

/** A fresh ticket key (the shell draws it; decisions stay pure). */
export function newTicketSecret(): Uint8Array {
  return randomFillSync(new Uint8Array(TICKET_SECRET_BYTES));
}
