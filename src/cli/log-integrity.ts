/**
 * `runlog verify`'s check of a partition's records, fed one at a time in log order: offsets
 * only go up; every value decodes; each record's key is the one its event is written
 * under (recordKeyOf); entry ids name this partition and Submitted seqs only go up; an
 * entry's events name one tenant and come after its submission (an entry pruned later may
 * have lost it to compaction); nothing moves an entry after it closed (Closed,
 * CancelRequested, ThreadDeleted); attempts are numbered 1, 2, 3... Store-clock times
 * going back within the partition are noted but not counted as damage.
 */
import { decodeEvent } from '../events/codec.ts';
import { recordKeyOf } from '../events/keys.ts';
import type { RunlogEvent } from '../events/types.ts';
import type { LogRecord } from '../log/event-log.ts';
import { parseEntryId } from '../queue/entry-id.ts';

export interface Finding {
  offset: bigint;
  problem: string;
}

interface EntryFacts {
  tenant: string;
  closed: boolean;
  lastAttempt: number;
}

export class PartitionIntegrity {
  readonly problems: Finding[] = [];
  readonly notes: Finding[] = [];
  records = 0;
  #lastOffset = -1n;
  #lastAt = -Infinity;
  #lastSeq = 0;
  readonly #entries = new Map<string, EntryFacts>();
  /** Events of entries never submitted here, unless a later EntriesPruned names them. */
  readonly #orphans = new Map<string, Finding>();

  constructor(
    readonly partition: number,
    readonly partitions: number,
  ) {}

  check(record: LogRecord): RunlogEvent | null {
    this.records++;
    if (record.offset <= this.#lastOffset) this.#problem(record.offset, `offset after offset ${this.#lastOffset}`);
    this.#lastOffset = record.offset;
    if (record.value === null) return null;
    let event: RunlogEvent;
    try {
      event = decodeEvent(record.value);
    } catch (error) {
      this.#problem(record.offset, `does not decode: ${(error as Error).message}`);
      return null;
    }
    const key = recordKeyOf(event);
    if (record.key !== key)
      this.#problem(record.offset, `${event.type} under key ${JSON.stringify(record.key)}, not ${JSON.stringify(key)}`);
    if (event.at < this.#lastAt)
      this.notes.push({
        offset: record.offset,
        problem: `${event.type} stamped ${this.#lastAt - event.at} ms before the event preceding it`,
      });
    this.#lastAt = Math.max(this.#lastAt, event.at);
    this.#entryEvent(record.offset, event);
    return event;
  }

  /** Ends the check: orphans no EntriesPruned explained become problems. */
  finish(): void {
    for (const orphan of this.#orphans.values()) this.#problem(orphan.offset, orphan.problem);
    this.problems.sort((a, b) => (a.offset < b.offset ? -1 : a.offset > b.offset ? 1 : 0));
  }

  #problem(offset: bigint, problem: string): void {
    this.problems.push({ offset, problem });
  }

  #entryEvent(offset: bigint, event: RunlogEvent): void {
    if (event.type === 'EntriesPruned') {
      for (const id of event.entryIds) this.#orphans.delete(id);
      return;
    }
    if (event.type === 'TicketKeyCreated' || event.type === 'CommandAnswered') return;
    const parsed = parseEntryId(event.entryId, this.partitions);
    if (parsed?.partition !== this.partition)
      this.#problem(offset, `${event.type} names entry ${JSON.stringify(event.entryId)}, not one of partition ${this.partition}`);
    if (event.type === 'Submitted') return this.#submitted(offset, event.entryId, event.tenant, event.seq);
    const entry = this.#entries.get(event.entryId);
    if (entry === undefined) {
      if (!this.#orphans.has(event.entryId))
        this.#orphans.set(event.entryId, { offset, problem: `${event.type} of entry ${event.entryId}, never submitted before it` });
      return;
    }
    if (event.tenant !== entry.tenant)
      this.#problem(
        offset,
        `${event.type} of entry ${event.entryId} names tenant ${JSON.stringify(event.tenant)}, submitted by ${JSON.stringify(entry.tenant)}`,
      );
    if (entry.closed) this.#problem(offset, `${event.type} of entry ${event.entryId} after it closed`);
    if (event.type === 'AttemptStarted') {
      if (event.attempt !== entry.lastAttempt + 1)
        this.#problem(offset, `attempt ${event.attempt} of entry ${event.entryId} after attempt ${entry.lastAttempt}`);
      entry.lastAttempt = event.attempt;
    }
    if (event.type === 'Closed' || event.type === 'CancelRequested' || event.type === 'ThreadDeleted') entry.closed = true;
  }

  #submitted(offset: bigint, entryId: string, tenant: string, seq: number): void {
    if (this.#entries.has(entryId)) this.#problem(offset, `entry ${entryId} submitted again`);
    if (seq <= this.#lastSeq) this.#problem(offset, `Submitted seq ${seq} after seq ${this.#lastSeq}`);
    this.#lastSeq = Math.max(this.#lastSeq, seq);
    this.#entries.set(entryId, { tenant, closed: false, lastAttempt: 0 });
  }
}
