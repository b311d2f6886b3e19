/**
 * The view's closed tickets: the ticket index (ticket-index.ts) addressed by entry id, and the
 * closed entries still held whole because the live writer folded their close before the append
 * holding it answered (unsettled: their rows do not know where all their records lie yet).
 *
 * Entry ids are not stored: a ticket's id is made from its seq (src/events/entry-ids.ts) with
 * the partition's ticket key, and an id is turned back into its seq the same way.
 */
import { formatEntryId, parseEntryId, sequenceOf } from '../src/events/entry-ids.ts';
import { threadKey } from '../src/events/keys.ts';
import type { Outcome, TicketKeyCreated } from '../src/events/types.ts';
import { ChurnMap } from '../src/churn-map.ts';
import { closedEntryOf, type ClosedEntry } from './closed-entry.ts';
import type { EntryState } from './entry-state.ts';
import { hash32, hash32After } from './hash32.ts';
import { TicketIndex, type ClosingTicket, type TicketRecords } from './ticket-index.ts';

export type TicketKey = Pick<TicketKeyCreated, 'secret' | 'legacyThrough'>;

/** What the view knows of a retained closed ticket without its entry. */
export interface ClosedTicket {
  readonly entryId: string;
  readonly seq: number;
  readonly tenant: string;
  readonly outcome: Outcome;
  readonly closedAt: number;
  /** How many attempts it made (its records e/<id>/a/1 .. /n). */
  readonly attempts: number;
  readonly closed: true;
}

/** Where a closed entry's records lie, and what the index keeps beside them: all a read-back needs. */
export interface StoredTicket {
  readonly records: TicketRecords;
  readonly deferredAttempts: number;
}

/**
 * An entry closed by the live writer whose records' offsets are not all known yet. A class, not
 * a literal: it holds its entry whole until the append is durable (src/plain-objects.ts).
 */
class Unsettled {
  constructor(
    readonly row: number,
    readonly entry: ClosedEntry,
    public submittedOffset: number,
    readonly attemptOffsets: number[],
    public closeOffset: number,
  ) {}
}

/** A submission key's id in the view: its thread's key, NUL, the key. */
export function submissionKeyId(tenant: string, thread: string, key: string): string {
  return `${threadKey(tenant, thread)}\u0000${key}`;
}

/** What a run id's hash is taken of: a run id names one run on its thread. */
export function runIdKey(tenant: string, thread: string, runId: string): string {
  return `${threadKey(tenant, thread)}\u0000${runId}`;
}

export class ClosedTickets {
  index = new TicketIndex();
  /** Come and go with every live close (src/churn-map.ts says why a ChurnMap). */
  readonly #unsettled = new ChurnMap<string, Unsettled>();

  constructor(
    private readonly partition: number,
    private readonly ticketKey: () => TicketKey | null,
  ) {}

  get size(): number {
    return this.index.size;
  }

  /** Closed entries held whole until their records are durable. */
  get unsettledCount(): number {
    return this.#unsettled.size;
  }

  /**
   * Indexes `entry`, which just closed with its closing record at `closeOffset` (-1: not known yet).
   * Every close of a replay comes here: the ticket and its records are written into objects kept
   * for the next close (the index copies them into its columns), and the hashes are taken over
   * the names' parts (from the thread's hashSeed: the same values as hash32 over submissionKeyId and runIdKey).
   */
  add(entry: EntryState, closeOffset: number): void {
    const { key, attempts } = entry;
    const seed = entry.threadState.hashSeed;
    const ticket = this.#closing;
    ticket.seq = entry.seq;
    ticket.tenant = entry.tenant;
    ticket.outcome = entry.outcome!;
    ticket.closedAt = entry.closedAt!;
    ticket.keyHash = key === null ? null : hash32After(seed, key);
    const runHashes = this.#runHashes;
    if (runHashes.length !== attempts.length) runHashes.length = attempts.length; // setting a length costs ~30 ns even when unchanged
    for (let n = 0; n < attempts.length; n++) runHashes[n] = hash32After(seed, attempts[n]!.runId);
    ticket.deferredAttempts = entry.deferredAttempts;
    let records: TicketRecords | null = null;
    if (entry.submittedOffset >= 0 && closeOffset >= 0 && allKnown(entry.attemptOffsets)) {
      records = this.#records;
      records.submittedOffset = entry.submittedOffset;
      records.closeOffset = closeOffset;
      records.attemptOffsets = entry.attemptOffsets;
    }
    const row = this.index.add(ticket, records);
    // Replay knows every offset; the live writer's close waits for its append's answer, held whole meanwhile.
    if (records === null) {
      const attemptOffsets = Array.from(entry.attemptOffsets);
      this.#unsettled.set(entry.entryId, new Unsettled(row, closedEntryOf(entry), entry.submittedOffset, attemptOffsets, closeOffset));
    }
  }

  /** What `add` hands the index, written afresh for each close. */
  readonly #runHashes: number[] = [];
  readonly #closing: ClosingTicket = {
    seq: 0,
    tenant: '',
    outcome: 'succeeded',
    closedAt: 0,
    keyHash: null,
    runHashes: this.#runHashes,
    deferredAttempts: 0,
  };
  readonly #records: { submittedOffset: number; closeOffset: number; attemptOffsets: readonly number[] } = {
    submittedOffset: 0,
    closeOffset: 0,
    attemptOffsets: [],
  };

  /** The retained closed ticket `entryId`, or undefined (open, pruned, never issued, or not an id of this partition). */
  find(entryId: string): ClosedTicket | undefined {
    const seq = this.seqOf(entryId);
    if (seq === null) return undefined;
    const row = this.index.rowOf(seq);
    return row < 0 ? undefined : this.#ticket(row, entryId);
  }

  /** The closed entry whole, while it is unsettled (the view holds it until its records are durable). */
  unsettledEntry(entryId: string): ClosedEntry | undefined {
    return this.#unsettled.get(entryId)?.entry;
  }

  /** Where `ticket`'s records lie (null while unsettled: unsettledEntry has it whole). */
  stored(ticket: ClosedTicket): StoredTicket | null {
    const row = this.index.rowOf(ticket.seq);
    const records = row < 0 ? null : this.index.recordsOf(row);
    return records === null ? null : { records, deferredAttempts: this.index.deferredAttemptsOf(row) };
  }

  /**
   * Learns where a record of an unsettled entry lies: `attempt` 0 for its Submitted, n for
   * attempt n, -1 for its closing record. Answers the entry once every offset is known.
   */
  settle(entryId: string, attempt: number, offset: number): ClosedEntry | null {
    const unsettled = this.#unsettled.get(entryId);
    if (unsettled === undefined) return null;
    if (attempt === 0) unsettled.submittedOffset = offset;
    else if (attempt > 0) unsettled.attemptOffsets[attempt - 1] = offset;
    else unsettled.closeOffset = offset;
    const records = recordsIfKnown(unsettled);
    if (records === null) return null;
    this.#unsettled.delete(entryId);
    this.index.settle(unsettled.row, records);
    return unsettled.entry;
  }

  /** Tickets whose submission key may be `key` of (tenant, thread): a hash hit; check the entry. */
  byKey(tenant: string, thread: string, key: string): ClosedTicket[] {
    return this.index.rowsByKey(hash32(submissionKeyId(tenant, thread, key))).map((row) => this.#ticket(row));
  }

  /** Tickets that may have run `runId` on (tenant, thread): a hash hit; check the entry. */
  byRunId(tenant: string, thread: string, runId: string): ClosedTicket[] {
    return this.index.rowsByRun(hash32(runIdKey(tenant, thread, runId))).map((row) => this.#ticket(row));
  }

  /** Closed tickets, oldest close first, while `accept` takes their close time; at most `limit`. */
  oldest(limit: number, accept: (closedAt: number) => boolean): ClosedTicket[] {
    return this.index.oldest(limit, accept).map((row) => this.#ticket(row));
  }

  /** Drops ticket `entryId` (pruned); false when it holds no such ticket. */
  remove(entryId: string): boolean {
    const ticket = this.find(entryId);
    if (ticket === undefined) return false;
    this.index.remove(this.index.rowOf(ticket.seq));
    this.#unsettled.delete(entryId);
    return true;
  }

  /** The seq `entryId` names in this partition, or null (see src/events/entry-ids.ts; legacy plain ids up to legacyThrough). */
  seqOf(entryId: string): number | null {
    const parsed = parseEntryId(entryId, this.partition + 1);
    if (parsed === null || parsed.partition !== this.partition) return null;
    const key = this.ticketKey();
    if (parsed.token === null) return key === null || parsed.seq <= key.legacyThrough ? parsed.seq : null;
    if (key === null) return null;
    const seq = sequenceOf(parsed.token, key.secret);
    return seq !== null && seq > key.legacyThrough ? seq : null;
  }

  entryIdOf(seq: number): string {
    const key = this.ticketKey();
    return key === null || seq <= key.legacyThrough ? `${this.partition}-${seq}` : formatEntryId(this.partition, seq, key.secret);
  }

  #ticket(row: number, entryId?: string): ClosedTicket {
    const index = this.index;
    const seq = index.seqOf(row);
    return {
      entryId: entryId ?? this.entryIdOf(seq),
      seq,
      tenant: index.tenantOf(row),
      outcome: index.outcomeOf(row),
      closedAt: index.closedAtOf(row),
      attempts: index.attemptsOf(row),
      closed: true,
    };
  }
}

function allKnown(offsets: readonly number[]): boolean {
  for (let n = 0; n < offsets.length; n++) if (offsets[n]! < 0) return false;
  return true;
}

function recordsIfKnown(pending: Omit<Unsettled, 'row' | 'entry'>): TicketRecords | null {
  const { submittedOffset, attemptOffsets, closeOffset } = pending;
  if (submittedOffset < 0 || closeOffset < 0 || attemptOffsets.some((offset) => offset < 0)) return null;
  return { submittedOffset, closeOffset, attemptOffsets };
}
