/**
 * Closed entries whole, for the queue: a cache of them bounded by bytes (the
 * `closedCacheBytes` option), and reading one back from the log on a miss, each of its
 * records by its offset (the ticket index knows them: projections/ticket-index.ts). The
 * file log seeks by its frame index; Kafka fetches from the offset (read_committed). Only
 * durable closed entries are cached, and a closed entry never changes: only pruning ends it,
 * and a lookup asks the view's index first, so a cached entry of a pruned ticket is never
 * answered (it just waits for eviction).
 */
import { LRUCache } from 'lru-cache';
import { RunlogError } from '../errors.ts';
import { decodeEvent } from '../events/codec.ts';
import { attemptKey, stateKey, submissionKey } from '../events/keys.ts';
import type { AttemptStarted, RunlogEvent, Submitted } from '../events/types.ts';
import type { EventLog, LogRecord } from '../log/event-log.ts';
import { closedEntryBytes, closedEntryFromRecords, type ClosedEntry, type Closing } from '../../projections/closed-entry.ts';
import type { ClosedTicket, StoredTicket } from '../../projections/closed-tickets.ts';

/**
 * CACHED AS WHAT. Entries read back from the log are cached (and entries read again stay
 * young). Entries closing are cached too only where a read-back is remote: on Kafka it is a
 * fetch (milliseconds), while the file log reads an entry back by position in microseconds and
 * the memory log from an array. Most closed entries are never read again (a worker closed
 * them; awaitClosed was answered by the close itself), and keeping each for a while costs every
 * close a Map set and the garbage collector an object graph promoted to the old generation and
 * collected there: on the file log, 64 callers' lifecycles took 10-17 µs more CPU each with
 * closes cached (34-52 against 27-36 µs, 2026-12-06).
 */
export function cachesCloses(log: Pick<EventLog, 'kind'>): boolean {
  return log.kind === 'kafka';
}

/** The closedCacheBytes default: 32 MiB, about 60,000 closed entries of 100-byte inputs. */
export const DEFAULT_CLOSED_CACHE_BYTES = 32 * 1024 * 1024;

/**
 * The closed entries read (or closed, where closes are cached: cachesCloses) most recently, in
 * an lru-cache bounded by their bytes as closedEntryBytes counts them. An entry larger than half
 * the bound is not kept: it would push out most of the others for one entry.
 */
export class ClosedEntryCache {
  /** Null with `maxBytes` 0: nothing is cached (every read of a closed entry goes to the log). */
  readonly #entries: LRUCache<string, ClosedEntry> | null;

  constructor(readonly maxBytes: number) {
    this.#entries =
      maxBytes === 0
        ? null
        : new LRUCache<string, ClosedEntry>({
            maxSize: maxBytes,
            maxEntrySize: Math.max(1, Math.floor(maxBytes / 2)),
            sizeCalculation: closedEntryBytes,
          });
  }

  /** The entry if held (it is then the most recently used). */
  get(entryId: string): ClosedEntry | undefined {
    return this.#entries?.get(entryId);
  }

  /** Keeps `entry` (a closed entry never changes: one held already stays as it is). */
  set(entry: ClosedEntry): void {
    if (this.#entries === null || this.#entries.has(entry.entryId)) return;
    this.#entries.set(entry.entryId, entry);
  }

  /** Entries held, and their bytes as counted (for tests and the bench). */
  get size(): { entries: number; bytes: number } {
    return { entries: this.#entries?.size ?? 0, bytes: this.#entries?.calculatedSize ?? 0 };
  }
}

/**
 * Reads `ticket`'s entry back from its records (Corrupt when a record is not where the index
 * says: the caller tells a ticket pruned meanwhile from a damaged log).
 */
export async function readClosedEntry(log: EventLog, partition: number, ticket: ClosedTicket, stored: StoredTicket): Promise<ClosedEntry> {
  const { entryId } = ticket;
  const { records, deferredAttempts } = stored;
  const [submitted, closing, ...attempts] = await Promise.all([
    readEvent(log, partition, records.submittedOffset, submissionKey(entryId)),
    readEvent(log, partition, records.closeOffset, stateKey(entryId)),
    ...records.attemptOffsets.map((offset, n) => readEvent(log, partition, offset, attemptKey(entryId, n + 1))),
  ]);
  if (submitted!.type !== 'Submitted') throw misplaced(partition, records.submittedOffset, `a ${submitted!.type}, not its Submitted`);
  if (!isClosing(closing!)) throw misplaced(partition, records.closeOffset, `a ${closing!.type}, not its close`);
  for (const [n, attempt] of attempts.entries()) {
    if (attempt.type !== 'AttemptStarted')
      throw misplaced(partition, records.attemptOffsets[n]!, `a ${attempt.type}, not attempt ${n + 1}`);
  }
  return closedEntryFromRecords(submitted as Submitted, attempts as AttemptStarted[], closing as Closing, deferredAttempts);
}

async function readEvent(log: EventLog, partition: number, offset: number, key: string): Promise<RunlogEvent> {
  const record = await recordAt(log, partition, BigInt(offset));
  if (record === null) throw misplaced(partition, offset, `nothing, not ${JSON.stringify(key)}`);
  if (record.offset !== BigInt(offset) || record.key !== key || record.value === null) {
    throw misplaced(partition, offset, `record ${record.offset} under ${JSON.stringify(record.key)}, not ${JSON.stringify(key)}`);
  }
  return decodeEvent(record.value);
}

/** The first record at or after `offset`: by the log's point read where it has one (Kafka), else a read of one record. */
async function recordAt(log: EventLog, partition: number, offset: bigint): Promise<LogRecord | null> {
  if (log.readAt !== undefined) return log.readAt(partition, offset);
  for await (const record of log.read(partition, offset, { maxRecords: 1 })) return record;
  return null;
}

function isClosing(event: RunlogEvent): event is Closing {
  return event.type === 'Closed' || event.type === 'CancelRequested' || event.type === 'ThreadDeleted';
}

function misplaced(partition: number, offset: number, found: string): RunlogError {
  return new RunlogError(
    'Corrupt',
    `partition ${partition} of the log holds ${found} at offset ${offset}, where the ticket index says a closed entry's record lies`,
  );
}
