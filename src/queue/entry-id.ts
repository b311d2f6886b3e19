/**
 * Entry (ticket) ids: `<partition>-<seq>`, seq counting from 1 per partition. The
 * partition's writer issues them in order and the EntriesPruned watermark remembers the
 * highest one issued, so an id is never reused, and an id can be told apart as
 * "issued once" (TicketExpired when it is gone) or "never issued" (TicketNotFound).
 */
export interface ParsedEntryId {
  partition: number;
  seq: number;
}

const PATTERN = /^(0|[1-9]\d{0,5})-([1-9]\d{0,15})$/;

export function formatEntryId(partition: number, seq: number): string {
  return `${partition}-${seq}`;
}

/** The id's parts, or null for anything not shaped like an id runlog issues. */
export function parseEntryId(entryId: unknown, partitions: number): ParsedEntryId | null {
  if (typeof entryId !== 'string') return null;
  const match = PATTERN.exec(entryId);
  if (match === null) return null;
  const partition = Number(match[1]);
  const seq = Number(match[2]);
  if (partition >= partitions || !Number.isSafeInteger(seq)) return null;
  return { partition, seq };
}
