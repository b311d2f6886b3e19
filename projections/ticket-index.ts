/**
 * The ticket index: one row per retained closed ticket of a partition, in typed arrays, so
 * that memory follows the open work and not the retention window. A row keeps what a lookup
 * needs to refuse or route without the entry (its tenant, outcome, close time), what finds it
 * (its seq; hashes of its submission key and of its attempts' run ids) and where its records
 * lie in the log (the whole entry is read back from there: src/queue/closed-entries.ts).
 *
 * Rows are numbered in the order closes are folded and never renumbered; the arrays hold rows
 * [#rowBase, #next), the live ones from #first on. Pruning removes the oldest closes, so the
 * front empties and the arrays are compacted from time to time (copyWithin, no renumbering).
 * Closes come in store-clock order except when a clock stepped back: such a "late" row is also
 * kept in #late, sorted by close time, and `oldest` merges both (prune order stays by close time).
 *
 * Three RowTables find rows: by seq, by key hash, by run-id hash. They hold tags (row numbers
 * modulo 2^32 - 1, plus 1); every hit is checked against the row, so a stale or colliding tag
 * only costs a probe. A hash hit is not a match: the caller checks the entry itself.
 *
 * A row added by the live writer does not know where its records lie yet (the append has not
 * answered): it is unsettled until `settle`, and the view holds that entry whole meanwhile.
 */
import type { Outcome } from '../src/events/types.ts';
import { DeltaColumn } from './delta-column.ts';
import { RowTable } from './row-table.ts';
import { fromColumns, toColumns, type TicketIndexColumns } from './ticket-columns.ts';

export { TICKET_INDEX_COLUMNS_VERSION, type TicketIndexColumns } from './ticket-columns.ts';

export const OUTCOMES: readonly Outcome[] = ['succeeded', 'failed', 'cancelled', 'expired', 'threadDeleted'];
/** state bits: the outcome's code (OUTCOMES index + 1; 0: removed), keyed, unsettled, late. */
export const OUTCOME_MASK = 7;
export const KEYED = 8;
const UNSETTLED = 16;
const LATE = 32;
const TAG_SPACE = 0xffffffff;
/** A delta that does not fit 32 bits is kept in a map instead. */
const WIDE = 0xffffffff;

/** What the index keeps of a ticket as it closes. */
export interface ClosingTicket {
  seq: number;
  tenant: string;
  outcome: Outcome;
  closedAt: number;
  /** hash32 of its submission key id, or null: no key. */
  keyHash: number | null;
  /** hash32 of each attempt's run id with its thread, attempt 1 first. */
  runHashes: readonly number[];
  deferredAttempts: number;
}

/** Where a ticket's records lie in the log. */
export interface TicketRecords {
  submittedOffset: number;
  closeOffset: number;
  /** Attempt n's AttemptStarted at index n - 1. */
  attemptOffsets: readonly number[];
}

export class TicketIndex {
  #rowBase = 0;
  #first = 0;
  #next = 0;
  #live = 0;
  /** Rows' capacity (the typed arrays' length). */
  #capacity = 64;
  readonly #seq = new DeltaColumn(64);
  readonly #closedAt = new DeltaColumn(64);
  /** Tenant ids: 1 byte each while there are at most 256 tenants, widened to 2 then 4 bytes when more appear. */
  #tenant: Uint8Array | Uint16Array | Uint32Array = new Uint8Array(64);
  #state = new Uint8Array(64);
  #keyHash = new Uint32Array(64);
  readonly #submitted = new DeltaColumn(64);
  #closeDelta = new Uint32Array(64);
  /** Per row, the absolute number (mod 2^32) one past its last attempt; attempts before #rowBase's end at #attemptBase. */
  #attemptsEnd = new Uint32Array(64);
  #attemptBase = 0;
  #attemptCount = 0;
  #attemptDelta = new Uint32Array(64);
  #runHash = new Uint32Array(64);
  readonly #wideClose = new Map<number, number>();
  readonly #wideAttempt = new Map<number, number>();
  readonly #deferred = new Map<number, number>();
  readonly #tenants: string[] = [];
  readonly #tenantIds = new Map<string, number>();
  #late: number[] = [];
  #lateStart = 0;
  #maxClosedAt = -Infinity;
  #unsettled = 0;
  readonly #bySeq = new RowTable();
  readonly #byKey = new RowTable();
  readonly #byRun = new RowTable();

  /** Retained closed tickets. */
  get size(): number {
    return this.#live;
  }

  /** Rows whose records' offsets are not known yet. */
  get unsettled(): number {
    return this.#unsettled;
  }

  /** Indexes a ticket that closed; answers its row (unsettled until `settle`, when `records` is null). */
  add(ticket: ClosingTicket, records: TicketRecords | null): number {
    const row = this.#next;
    this.#ensureRows(1);
    this.#ensureAttempts(ticket.runHashes.length);
    const i = row - this.#rowBase;
    this.#next++;
    this.#live++;
    this.#seq.set(row, i, ticket.seq);
    this.#closedAt.set(row, i, ticket.closedAt);
    const tenant = this.#tenantId(ticket.tenant); // first: a new tenant may widen the column
    this.#tenant[i] = tenant;
    this.#keyHash[i] = ticket.keyHash ?? 0;
    const late = ticket.closedAt < this.#maxClosedAt;
    this.#state[i] = (OUTCOMES.indexOf(ticket.outcome) + 1) | (ticket.keyHash === null ? 0 : KEYED) | (late ? LATE : 0);
    if (ticket.deferredAttempts !== 0) this.#deferred.set(row, ticket.deferredAttempts);
    const start = this.#attemptStart(row);
    for (const [n, hash] of ticket.runHashes.entries()) this.#runHash[this.#attemptIndex(start + n)] = hash;
    this.#attemptCount += ticket.runHashes.length;
    this.#attemptsEnd[i] = (start + ticket.runHashes.length) >>> 0;
    if (records === null) {
      this.#state[i]! |= UNSETTLED;
      this.#unsettled++;
    } else this.#setRecords(row, records);
    if (late) this.#insertLate(row);
    else this.#maxClosedAt = ticket.closedAt;
    this.#addToTables(row);
    return row;
  }

  /** The records of an unsettled row are known now. */
  settle(row: number, records: TicketRecords): void {
    const i = row - this.#rowBase;
    if (!this.#alive(row) || (this.#state[i]! & UNSETTLED) === 0) return;
    this.#state[i]! &= ~UNSETTLED;
    this.#unsettled--;
    this.#setRecords(row, records);
  }

  /** The row of ticket `seq`, or -1. */
  rowOf(seq: number): number {
    const tag = this.#bySeq.find(seqHash(seq), (t) => {
      const row = this.#rowOfTag(t);
      return this.#alive(row) && this.#seq.get(row, row - this.#rowBase) === seq;
    });
    return tag === 0 ? -1 : this.#rowOfTag(tag);
  }

  /** Rows whose submission key hashes to `hash` (check the key itself). */
  rowsByKey(hash: number): number[] {
    return this.#byKey.findAll(hash, (t) => this.#keyedHit(t, hash)).map((t) => this.#rowOfTag(t));
  }

  /** Rows with an attempt whose run id (with its thread) hashes to `hash` (check the run id itself). */
  rowsByRun(hash: number): number[] {
    const rows = this.#byRun.findAll(hash, (t) => this.#runHit(t, hash)).map((t) => this.#rowOfTag(t));
    return [...new Set(rows)];
  }

  seqOf(row: number): number {
    return this.#seq.get(row, row - this.#rowBase);
  }

  tenantOf(row: number): string {
    return this.#tenants[this.#tenant[row - this.#rowBase]!]!;
  }

  outcomeOf(row: number): Outcome {
    return OUTCOMES[(this.#state[row - this.#rowBase]! & OUTCOME_MASK) - 1]!;
  }

  closedAtOf(row: number): number {
    return this.#closedAt.get(row, row - this.#rowBase);
  }

  attemptsOf(row: number): number {
    return (this.#attemptsEnd[row - this.#rowBase]! - this.#attemptStart(row)) >>> 0;
  }

  deferredAttemptsOf(row: number): number {
    return this.#deferred.get(row) ?? 0;
  }

  /** Where the row's records lie, or null while unsettled. */
  recordsOf(row: number): TicketRecords | null {
    const i = row - this.#rowBase;
    if ((this.#state[i]! & UNSETTLED) !== 0) return null;
    const submittedOffset = this.#submitted.get(row, i);
    const delta = this.#closeDelta[i]!;
    const closeOffset = delta === WIDE ? this.#wideClose.get(row)! : submittedOffset + delta;
    const attemptOffsets: number[] = [];
    const start = this.#attemptStart(row);
    for (let n = 0; n < this.attemptsOf(row); n++) {
      const a = (start + n) >>> 0;
      const d = this.#attemptDelta[this.#attemptIndex(a)]!;
      attemptOffsets.push(d === WIDE ? this.#wideAttempt.get(a)! : submittedOffset + d);
    }
    return { submittedOffset, closeOffset, attemptOffsets };
  }

  /** Drops a row (its ticket was pruned). */
  remove(row: number): void {
    if (!this.#alive(row)) return;
    const i = row - this.#rowBase;
    if ((this.#state[i]! & UNSETTLED) !== 0) this.#unsettled--;
    const start = this.#attemptStart(row);
    const attempts = this.attemptsOf(row);
    for (let n = 0; n < attempts; n++) this.#wideAttempt.delete((start + n) >>> 0);
    this.#attemptCount -= attempts;
    this.#state[i] = 0;
    this.#live--;
    this.#deferred.delete(row);
    this.#wideClose.delete(row);
    for (const column of [this.#seq, this.#closedAt, this.#submitted]) column.forget(row);
    this.#trimFront();
  }

  /** Live rows, oldest close first, while `accept` takes their close time; at most `limit`. */
  oldest(limit: number, accept: (closedAt: number) => boolean): number[] {
    const found: number[] = [];
    let main = this.#first;
    let late = this.#lateStart;
    while (found.length < limit) {
      while (main < this.#next && (!this.#alive(main) || (this.#state[main - this.#rowBase]! & LATE) !== 0)) main++;
      while (late < this.#late.length && !this.#alive(this.#late[late]!)) late++;
      const fromMain = main < this.#next ? main : -1;
      const fromLate = late < this.#late.length ? this.#late[late]! : -1;
      if (fromMain < 0 && fromLate < 0) break;
      const takeLate = fromLate >= 0 && (fromMain < 0 || this.closedAtOf(fromLate) < this.closedAtOf(fromMain));
      const row = takeLate ? fromLate : fromMain;
      if (!accept(this.closedAtOf(row))) break;
      found.push(row);
      if (takeLate) late++;
      else main++;
    }
    return found;
  }

  /** The index as columns (INDEX-COLUMNS.md): a copy, rows in prune order. Throws while a row is unsettled. */
  toColumns(): TicketIndexColumns {
    if (this.#unsettled > 0) throw new Error(`the ticket index has ${this.#unsettled} closes whose records are not durable yet`);
    return toColumns(
      this,
      this.oldest(Number.POSITIVE_INFINITY, () => true),
    );
  }

  /** An index holding what `columns` describe (checked: Corrupt naming what is wrong). */
  static fromColumns(columns: TicketIndexColumns): TicketIndex {
    const index = new TicketIndex();
    fromColumns(columns, (ticket, records) => index.add(ticket, records));
    return index;
  }

  /** Row `row`'s key hash and state bits (for ticket-columns.ts). */
  keyHashOf(row: number): number {
    return this.#keyHash[row - this.#rowBase]!;
  }

  isKeyed(row: number): boolean {
    return (this.#state[row - this.#rowBase]! & KEYED) !== 0;
  }

  runHashesOf(row: number): number[] {
    const start = this.#attemptStart(row);
    return Array.from({ length: this.attemptsOf(row) }, (_, n) => this.#runHash[this.#attemptIndex((start + n) >>> 0)]!);
  }

  #alive(row: number): boolean {
    return row >= this.#first && row < this.#next && (this.#state[row - this.#rowBase]! & OUTCOME_MASK) !== 0;
  }

  #keyedHit(tag: number, hash: number): boolean {
    const row = this.#rowOfTag(tag);
    return this.#alive(row) && this.isKeyed(row) && this.#keyHash[row - this.#rowBase] === hash;
  }

  #runHit(tag: number, hash: number): boolean {
    const row = this.#rowOfTag(tag);
    if (!this.#alive(row)) return false;
    const start = this.#attemptStart(row);
    for (let n = 0; n < this.attemptsOf(row); n++) if (this.#runHash[this.#attemptIndex((start + n) >>> 0)] === hash) return true;
    return false;
  }

  readonly #dead = (tag: number): boolean => !this.#alive(this.#rowOfTag(tag));

  #addToTables(row: number): void {
    if (this.#bySeq.full || this.#byKey.full || this.#byRun.full) return this.#rebuildTables();
    const tag = (row % TAG_SPACE) + 1;
    this.#bySeq.add(seqHash(this.seqOf(row)), tag, this.#dead);
    if (this.isKeyed(row)) this.#byKey.add(this.keyHashOf(row), tag, this.#dead);
    for (const hash of this.runHashesOf(row)) this.#byRun.add(hash, tag, this.#dead);
  }

  /** Every table emptied and refilled from the live rows (a table was 3/4 used: dead slots go). */
  #rebuildTables(): void {
    let keyed = 0;
    for (let row = this.#first; row < this.#next; row++) if (this.#alive(row) && this.isKeyed(row)) keyed++;
    this.#bySeq.reset(this.#live);
    this.#byKey.reset(keyed);
    this.#byRun.reset(this.#attemptCount);
    for (let row = this.#first; row < this.#next; row++) {
      if (!this.#alive(row)) continue;
      const tag = (row % TAG_SPACE) + 1;
      this.#bySeq.add(seqHash(this.seqOf(row)), tag, this.#dead);
      if (this.isKeyed(row)) this.#byKey.add(this.keyHashOf(row), tag, this.#dead);
      for (const hash of this.runHashesOf(row)) this.#byRun.add(hash, tag, this.#dead);
    }
  }

  #rowOfTag(tag: number): number {
    return this.#first + ((tag - 1 - (this.#first % TAG_SPACE) + TAG_SPACE) % TAG_SPACE);
  }

  #attemptStart(row: number): number {
    return row === this.#rowBase ? this.#attemptBase : this.#attemptsEnd[row - this.#rowBase - 1]!;
  }

  #attemptIndex(attempt: number): number {
    return (attempt - this.#attemptBase) >>> 0;
  }

  #setRecords(row: number, records: TicketRecords): void {
    const i = row - this.#rowBase;
    const base = records.submittedOffset;
    this.#submitted.set(row, i, base);
    this.#closeDelta[i] = this.#delta(records.closeOffset, base, row, this.#wideClose);
    const start = this.#attemptStart(row);
    for (const [n, offset] of records.attemptOffsets.entries()) {
      const a = (start + n) >>> 0;
      this.#attemptDelta[this.#attemptIndex(a)] = this.#delta(offset, base, a, this.#wideAttempt);
    }
  }

  /** `offset - base` when it fits 32 bits; else WIDE, and the offset itself kept in `wide` under `at`. */
  #delta(offset: number, base: number, at: number, wide: Map<number, number>): number {
    const delta = offset - base;
    if (delta >= 0 && delta < WIDE) return delta;
    wide.set(at, offset);
    return WIDE;
  }

  #tenantId(tenant: string): number {
    let id = this.#tenantIds.get(tenant);
    if (id === undefined) {
      id = this.#tenants.length;
      this.#tenants.push(tenant);
      this.#tenantIds.set(tenant, id);
      if (id === 0x100) this.#tenant = Uint16Array.from(this.#tenant);
      else if (id === 0x10000) this.#tenant = Uint32Array.from(this.#tenant);
    }
    return id;
  }

  #insertLate(row: number): void {
    const at = this.closedAtOf(row);
    let index = this.#late.length;
    while (index > this.#lateStart && this.closedAtOf(this.#late[index - 1]!) > at) index--;
    this.#late.splice(index, 0, row);
  }

  /** Moves #first past removed rows; compacts the arrays once the removed front is half of them. */
  #trimFront(): void {
    while (this.#first < this.#next && !this.#alive(this.#first)) this.#first++;
    while (this.#lateStart < this.#late.length && !this.#alive(this.#late[this.#lateStart]!)) this.#lateStart++;
    if (this.#lateStart > 64 && this.#lateStart * 2 > this.#late.length) {
      this.#late = this.#late.slice(this.#lateStart);
      this.#lateStart = 0;
    }
    const dropped = this.#first - this.#rowBase;
    if (dropped >= 1024 && dropped * 2 >= this.#next - this.#rowBase) this.#compact();
  }

  #compact(): void {
    const dropped = this.#first - this.#rowBase;
    const used = this.#next - this.#first;
    const attemptStart = this.#attemptStart(this.#first);
    const attemptsDropped = this.#attemptIndex(attemptStart);
    const attemptsUsed = this.#attemptsUsed();
    for (const column of [this.#tenant, this.#state, this.#keyHash, this.#closeDelta, this.#attemptsEnd]) {
      column.copyWithin(0, dropped, dropped + used);
    }
    for (const column of [this.#seq, this.#closedAt, this.#submitted]) column.compact(this.#rowBase, dropped, used);
    this.#attemptDelta.copyWithin(0, attemptsDropped, attemptsUsed);
    this.#runHash.copyWithin(0, attemptsDropped, attemptsUsed);
    this.#rowBase = this.#first;
    this.#attemptBase = attemptStart;
  }

  /** Attempt slots in use: up to the end of the last row's attempts. */
  #attemptsUsed(): number {
    return this.#next === this.#rowBase ? 0 : this.#attemptIndex(this.#attemptsEnd[this.#next - 1 - this.#rowBase]!);
  }

  #ensureRows(more: number): void {
    const needed = this.#next + more - this.#rowBase;
    if (needed <= this.#capacity) return;
    const length = Math.max(needed, this.#capacity * 2);
    this.#capacity = length;
    for (const column of [this.#seq, this.#closedAt, this.#submitted]) column.grow(length);
    this.#tenant = grown(this.#tenant, length);
    this.#state = grown(this.#state, length);
    this.#keyHash = grown(this.#keyHash, length);
    this.#closeDelta = grown(this.#closeDelta, length);
    this.#attemptsEnd = grown(this.#attemptsEnd, length);
  }

  #ensureAttempts(more: number): void {
    const needed = this.#attemptsUsed() + more;
    if (needed <= this.#runHash.length) return;
    const length = Math.max(needed, this.#runHash.length * 2);
    this.#attemptDelta = grown(this.#attemptDelta, length);
    this.#runHash = grown(this.#runHash, length);
  }
}

/** A seq's slot hash (a seq may pass 2^32). */
function seqHash(seq: number): number {
  let h = Math.imul((seq >>> 0) ^ Math.floor(seq / 4294967296), 0x9e3779b1);
  h ^= h >>> 15;
  return Math.imul(h, 0x85ebca6b) >>> 0;
}

type TypedArray = Float64Array | Uint32Array | Uint16Array | Uint8Array;

function grown<T extends TypedArray>(array: T, length: number): T {
  const bigger = new (array.constructor as new (length: number) => T)(length);
  bigger.set(array as never);
  return bigger;
}
