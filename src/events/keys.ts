/**
 * Record keys. Compaction keeps only the latest record per key, so every event is keyed
 * so that the latest record of each key is all a replay needs:
 *   e/<entryId>/s        the Submitted event (never changes)
 *   e/<entryId>/a/<n>    AttemptStarted of attempt n (each attempt kept)
 *   e/<entryId>/m        the entry's latest mutable state: Leased, LeaseExtended, Yielded,
 *                        CancelRequested, Closed, ThreadDeleted (each carries its whole state)
 *   p/pruned             EntriesPruned: the partition's retention watermark
 *   p/ticket-key         TicketKeyCreated: the partition's ticket key (never tombstoned)
 *   r/<tenant>/<request> CommandAnswered: the answer to a request of the commands topic (the
 *                        latest answer of a request id is all its idempotency needs)
 * Pruning an entry tombstones all its keys, and the answers naming it (see answerKey).
 */
import type { RunlogEvent } from './types.ts';

/**
 * A thread's key, the one name of a (tenant, thread) pair: `tenant + "\u0000" + thread` (a
 * name holds no NUL, so two threads never share a key). The log's partitioner hashes its
 * UTF-8 bytes to choose the thread's partition (src/log/partitioner.ts); the partition's
 * view indexes the thread by it (projections/partition-view.ts).
 */
export function threadKey(tenant: string, thread: string): string {
  return `${tenant}\u0000${thread}`;
}

export const PRUNED_KEY = 'p/pruned';
export const TICKET_KEY_KEY = 'p/ticket-key';

export function submissionKey(entryId: string): string {
  return `e/${entryId}/s`;
}

export function stateKey(entryId: string): string {
  return `e/${entryId}/m`;
}

export function attemptKey(entryId: string, attempt: number): string {
  return `e/${entryId}/a/${attempt}`;
}

/**
 * The key of the answers to `tenant`'s request `requestId`: `r/<tenant>/<requestId>`, with
 * '%' and '/' in the tenant written %25 and %2F, so that no two (tenant, request id) pairs
 * share a key (compaction would keep only one of their answers). A request id may hold '/'.
 */
export function answerKey(tenant: string, requestId: string): string {
  return `r/${tenant.replaceAll('%', '%25').replaceAll('/', '%2F')}/${requestId}`;
}

/** Whether a record key is an answer's (answerKey). */
export function isAnswerKey(key: string): boolean {
  return key.startsWith('r/');
}

export function recordKeyOf(event: RunlogEvent): string {
  switch (event.type) {
    case 'CommandAnswered':
      return answerKey(event.tenant, event.requestId);
    case 'Submitted':
      return submissionKey(event.entryId);
    case 'AttemptStarted':
      return attemptKey(event.entryId, event.attempt);
    case 'EntriesPruned':
      return PRUNED_KEY;
    case 'TicketKeyCreated':
      return TICKET_KEY_KEY;
    default:
      return stateKey(event.entryId);
  }
}

/** The entry id a record key is about, or null for a partition-level key. */
export function entryIdOfKey(key: string): string | null {
  if (!key.startsWith('e/')) return null;
  const end = key.indexOf('/', 2);
  return end < 0 ? null : key.slice(2, end);
}
