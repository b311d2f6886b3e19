/**
 * The ticket index: one row per retained closed ticket of a partition, in typed arrays, so
 * that memory follows the open work and not the retention window. A row keeps what a lookup
 * needs to refuse or route without the entry (its tenant, outcome, close time), what finds it
 * (its seq; hashes of its submission key and of its attempts' run ids) and where its records
 * lie in the log (the whole entry is read back from there: src/queue/closed-entries.ts).
 *
 * Rows are numbered in the order closes are folded and never renumbered; the arrays hold rows
 * [#rowBase, #next), the live ones from #first on. Pruning removes the oldest closes, so the
 * front empties and the columns drop it a whole chunk at a time (chunked-column.ts; no
 * renumbering, no copy). A snapshot's columns are loaded whole (fromColumns), not row by row.
 * Closes come in store-clock order except when a clock stepped back: such a "late" row is also
 * kept in #late, sorted by close time, and `oldest` merges both (prune order stays by close time).
 *
 * Three RowTables find rows: by seq, by key hash, by run-id hash. They hold tags (row numbers
 * modulo 2^32 - 1, plus 1); every hit is checked against the row, so a stale or colliding tag
 * only costs a probe. A hash hit is not a match: the caller checks the entry itself. Rows go
 * into the tables when a lookup next needs them, not as they are added (#syncTables): a replay
 * adds every close of the log and looks nothing up, so its tables are filled once, whole, at
 * the size they end at, instead of re-filled at every growth.
 *
 * A row added by the live writer does not know where its records lie yet (the append has not
 * answered): it is unsettled until `settle`, and the view holds that entry whole meanwhile.
 */
import type { Outcome } from '../src/events/types.ts';
import { CHUNK, CHUNK_BITS, ChunkedColumn } from './chunked-column.ts';
import { KEYED, OUTCOME_CODES, OUTCOME_MASK, OUTCOMES } from './ticket-flags.ts';
import { DeltaColumn } from './delta-column.ts';
import { seqHash } from './hash32.ts';
import { FillScratch, RowTable } from './row-table.ts';
import { fillTables, type IndexTables, type LoadedRows } from './table-fill.ts';
import { readColumns, RowChecks, toColumns, type ColumnReaders, type TicketIndexColumns } from './ticket-columns.ts';

/** A snapshot's stored fields (snapshot-columns.ts storedColumns), typed columns not copied out of its bytes. */
export type StoredTicketColumns = Readonly<Record<string, unknown>>;

export { TICKET_INDEX_COLUMNS_VERSION, type TicketIndexColumns } from './ticket-columns.ts';

/** state bits beyond the outcome and KEYED (ticket-flags.ts), never in columns: unsettled, late. */
const UNSETTLED = 16;
const LATE = 32;
const TAG_SPACE = 0xffffffff;
const IN_CHUNK = CHUNK - 1;
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

/** A frozen copy of an index (TicketIndex.freeze) and how to let the index go on without it. */
export interface FrozenTicketIndex {
  readonly index: TicketIndex;
  /** The copy is done with (idempotent): the index forgets what it kept for it. */
  release(): void;
}

export class TicketIndex {
  /** Element 0 of the row columns: a multiple of CHUNK (whole chunks of pruned rows are dropped). */
  #rowBase = 0;
  #first = 0;
  #next = 0;
  #live = 0;
  /** Row elements allocated (from #rowBase on). */
  #capacity = 0;
  #seq = new DeltaColumn();
  #closedAt = new DeltaColumn();
  /** Tenant ids: 1 byte each, a chunk widened to 2 then 4 bytes when it names a tenant past 256 or 65,536. */
  #tenant = new ChunkedColumn((n) => new Uint8Array(n), false, true);
  #state = new ChunkedColumn((n) => new Uint8Array(n));
  /** Key hashes of keyed rows; a chunk with no keyed row holds no array (most rows have no key). */
  #keyHash = new ChunkedColumn((n) => new Uint32Array(n), true);
  #submitted = new DeltaColumn();
  /** Close offset minus Submitted offset: 1 byte each, a chunk widened to 2 then 4 bytes as its deltas need (WIDE needs 4). */
  #closeDelta = new ChunkedColumn((n) => new Uint8Array(n), false, true);
  /** Per row, the absolute number (mod 2^32) one past its last attempt. */
  #attemptsEnd = new ChunkedColumn((n) => new Uint32Array(n));
  /** Where row #rowBase's attempts start (absolute, mod 2^32). */
  #baseAttemptStart = 0;
  /** The absolute attempt number (mod 2^32) of the attempt columns' element 0: a multiple of CHUNK. */
  #attemptBase = 0;
  /** Attempt elements allocated (from #attemptBase on). */
  #attemptCapacity = 0;
  #attemptCount = 0;
  /** AttemptStarted offset minus Submitted offset, widening as #closeDelta. */
  #attemptDelta = new ChunkedColumn((n) => new Uint8Array(n), false, true);
  #runHash = new ChunkedColumn((n) => new Uint32Array(n));
  #wideClose = new Map<number, number>();
  #wideAttempt = new Map<number, number>();
  #deferred = new Map<number, number>();
  #tenants: string[] = [];
  /** Live rows per tenant id: a snapshot names only the tenants some row names (liveTenantIds). */
  #tenantRows: number[] = [];
  readonly #tenantIds = new Map<string, number>();
  /** The tenant #tenantId last answered, and its id: most closes in a row are of one tenant (a Map lookup saved per row). */
  #lastTenant: string | null = null;
  #lastTenantId = 0;
  #late: number[] = [];
  #lateStart = 0;
  #maxClosedAt = -Infinity;
  #unsettled = 0;
  #bySeq = new RowTable();
  #byKey = new RowTable();
  #byRun = new RowTable();
  /** Loaded with its tables to be filled elsewhere (fromColumns `tables` 'later'): no lookup until adoptTables. */
  #tablesLater = false;
  /** Rows from here on were added since the tables last took rows: #syncTables puts them in. */
  #tabled = 0;
  /**
   * While a frozen copy is out (freeze): the rows removed since, each as (row, its first
   * attempt, its attempts), whose entries in the maps the copy shares are forgotten at release.
   */
  #forgetLater: number[] | null = null;

  /** Retained closed tickets. */
  get size(): number {
    return this.#live;
  }

  /** The retained closed tickets' attempts, in all. */
  get attemptCount(): number {
    return this.#attemptCount;
  }

  /** Rows whose records' offsets are not known yet. */
  get unsettled(): number {
    return this.#unsettled;
  }

  /** The ids of the tenants some live row names, in id order (`tenants` may name tenants whose rows were all pruned). */
  liveTenantIds(): number[] {
    const ids: number[] = [];
    for (let id = 0; id < this.#tenantRows.length; id++) if (this.#tenantRows[id]! > 0) ids.push(id);
    return ids;
  }

  /** The tenants rows name, by tenant id (tenantIdOf). */
  get tenants(): readonly string[] {
    return this.#tenants;
  }

  /** Indexes a ticket that closed; answers its row (unsettled until `settle`, when `records` is null). */
  add(ticket: ClosingTicket, records: TicketRecords | null): number {
    const row = this.#next;
    const runHashes = ticket.runHashes;
    // Where its attempts start: one past the previous row's (read once: the index adds a row per close of a replay).
    const start = this.#attemptStart(row);
    this.#ensureRows(1);
    this.#ensureAttempts(this.#attemptIndex(start) + runHashes.length);
    const i = row - this.#rowBase;
    this.#next++;
    this.#live++;
    this.#seq.set(row, i, ticket.seq);
    this.#closedAt.set(row, i, ticket.closedAt);
    const tenant = this.#tenantId(ticket.tenant);
    this.#tenant.set(i, tenant);
    this.#tenantRows[tenant]!++;
    this.#keyHash.set(i, ticket.keyHash ?? 0);
    const late = ticket.closedAt < this.#maxClosedAt;
    const unsettled = records === null ? UNSETTLED : 0;
    this.#state.set(i, OUTCOME_CODES[ticket.outcome] | (ticket.keyHash === null ? 0 : KEYED) | (late ? LATE : 0) | unsettled);
    if (ticket.deferredAttempts !== 0) this.#deferred.set(row, ticket.deferredAttempts);
    for (let n = 0; n < runHashes.length; n++) this.#runHash.set(this.#attemptIndex(start + n), runHashes[n]!);
    this.#attemptCount += runHashes.length;
    this.#attemptsEnd.set(i, (start + runHashes.length) >>> 0);
    if (records === null) this.#unsettled++;
    else this.#setRecords(row, i, start, records);
    if (late) this.#insertLate(row);
    else this.#maxClosedAt = ticket.closedAt;
    return row;
  }

  /** The records of an unsettled row are known now. */
  settle(row: number, records: TicketRecords): void {
    const i = row - this.#rowBase;
    if (!this.#alive(row) || (this.#state.get(i) & UNSETTLED) === 0) return;
    this.#state.set(i, this.#state.get(i) & ~UNSETTLED);
    this.#unsettled--;
    this.#setRecords(row, i, this.#attemptStart(row), records);
  }

  /** The row of ticket `seq`, or -1. */
  rowOf(seq: number): number {
    this.#syncTables();
    const tag = this.#bySeq.find(seqHash(seq), (t) => {
      const row = this.#rowOfTag(t);
      return this.#alive(row) && this.#seq.get(row, row - this.#rowBase) === seq;
    });
    return tag === 0 ? -1 : this.#rowOfTag(tag);
  }

  /** Rows whose submission key hashes to `hash` (check the key itself). */
  rowsByKey(hash: number): number[] {
    this.#syncTables();
    return this.#byKey.findAll(hash, (t) => this.#keyedHit(t, hash)).map((t) => this.#rowOfTag(t));
  }

  /** Rows with an attempt whose run id (with its thread) hashes to `hash` (check the run id itself). */
  rowsByRun(hash: number): number[] {
    this.#syncTables();
    const rows = this.#byRun.findAll(hash, (t) => this.#runHit(t, hash)).map((t) => this.#rowOfTag(t));
    return [...new Set(rows)];
  }

  seqOf(row: number): number {
    return this.#seq.get(row, row - this.#rowBase);
  }

  tenantOf(row: number): string {
    return this.#tenants[this.tenantIdOf(row)]!;
  }

  /** The row's tenant as an index into `tenants`. */
  tenantIdOf(row: number): number {
    return this.#tenant.get(row - this.#rowBase);
  }

  outcomeOf(row: number): Outcome {
    return OUTCOMES[(this.#state.get(row - this.#rowBase) & OUTCOME_MASK) - 1]!;
  }

  closedAtOf(row: number): number {
    return this.#closedAt.get(row, row - this.#rowBase);
  }

  attemptsOf(row: number): number {
    return (this.#attemptsEnd.get(row - this.#rowBase) - this.#attemptStart(row)) >>> 0;
  }

  deferredAttemptsOf(row: number): number {
    return this.#deferred.get(row) ?? 0;
  }

  /** Where the row's records lie, or null while unsettled. */
  recordsOf(row: number): TicketRecords | null {
    if ((this.#state.get(row - this.#rowBase) & UNSETTLED) !== 0) return null;
    const attemptOffsets: number[] = [];
    for (let n = 0; n < this.attemptsOf(row); n++) attemptOffsets.push(this.attemptOffsetOf(row, n));
    return { submittedOffset: this.submittedOffsetOf(row), closeOffset: this.closeOffsetOf(row), attemptOffsets };
  }

  /** Offset of a settled row's Submitted record. */
  submittedOffsetOf(row: number): number {
    return this.#submitted.get(row, row - this.#rowBase);
  }

  /** Offset of a settled row's closing record. */
  closeOffsetOf(row: number): number {
    const delta = this.#closeDelta.get(row - this.#rowBase);
    return delta === WIDE ? this.#wideClose.get(row)! : this.submittedOffsetOf(row) + delta;
  }

  /** Offset of a settled row's attempt n + 1 (n from 0). */
  attemptOffsetOf(row: number, n: number): number {
    const a = (this.#attemptStart(row) + n) >>> 0;
    const delta = this.#attemptDelta.get(this.#attemptIndex(a));
    return delta === WIDE ? this.#wideAttempt.get(a)! : this.submittedOffsetOf(row) + delta;
  }

  /** The run-id hash of the row's attempt n + 1 (n from 0). */
  runHashOf(row: number, n: number): number {
    return this.#runHash.get(this.#attemptIndex((this.#attemptStart(row) + n) >>> 0));
  }

  /** Drops a row (its ticket was pruned). */
  remove(row: number): void {
    if (!this.#alive(row)) return;
    const i = row - this.#rowBase;
    if ((this.#state.get(i) & UNSETTLED) !== 0) this.#unsettled--;
    const start = this.#attemptStart(row);
    const attempts = this.attemptsOf(row);
    this.#attemptCount -= attempts;
    this.#tenantRows[this.tenantIdOf(row)]!--;
    this.#state.set(i, 0);
    this.#live--;
    if (this.#forgetLater === null) this.#forget(row, start, attempts);
    else this.#forgetLater.push(row, start, attempts);
    this.#trimFront();
  }

  /** A removed row's entries in the maps go (its whole values, deferred attempts). */
  #forget(row: number, start: number, attempts: number): void {
    for (let n = 0; n < attempts; n++) this.#wideAttempt.delete((start + n) >>> 0);
    this.#deferred.delete(row);
    this.#wideClose.delete(row);
    for (const column of [this.#seq, this.#closedAt, this.#submitted]) column.forget(row);
  }

  /**
   * A copy of the index as it is now that later changes to this one leave alone, made without
   * copying a row: for a snapshot written a stretch of rows at a time over several turns
   * (ticket-columns-writer.ts), while this index goes on taking closes and prunes. The copy
   * shares every column's chunks and the maps. That is safe because the only write to a row
   * already added is remove() zeroing its state: the state column copies a shared chunk before
   * writing into it, and the map entries of rows removed meanwhile are forgotten only at
   * `release` (rows are never renumbered, so a stale entry is never read). Everything else
   * writes rows past the copy's last (new closes), or replaces arrays the copy keeps
   * (widening, dropping pruned chunks). The copy is for reading rows (toColumns, the
   * accessors), not for lookups. One at a time; not while a row is unsettled (its records'
   * offsets are still to be written).
   */
  freeze(): FrozenTicketIndex {
    if (this.#unsettled > 0) throw new Error(`the ticket index has ${this.#unsettled} closes whose records are not durable yet`);
    if (this.#forgetLater !== null) throw new Error('the ticket index has a frozen copy out already');
    const copy = new TicketIndex();
    [copy.#rowBase, copy.#first, copy.#next, copy.#live, copy.#capacity] = [
      this.#rowBase,
      this.#first,
      this.#next,
      this.#live,
      this.#capacity,
    ];
    [copy.#seq, copy.#closedAt, copy.#submitted] = [this.#seq.sharedCopy(), this.#closedAt.sharedCopy(), this.#submitted.sharedCopy()];
    copy.#state = this.#state.shareWith(true);
    [copy.#tenant, copy.#keyHash, copy.#closeDelta, copy.#attemptsEnd] = [
      this.#tenant,
      this.#keyHash,
      this.#closeDelta,
      this.#attemptsEnd,
    ].map((column) => column.shareWith(false)) as [ChunkedColumn, ChunkedColumn, ChunkedColumn, ChunkedColumn];
    [copy.#attemptDelta, copy.#runHash] = [this.#attemptDelta.shareWith(false), this.#runHash.shareWith(false)];
    [copy.#baseAttemptStart, copy.#attemptBase, copy.#attemptCapacity, copy.#attemptCount] = [
      this.#baseAttemptStart,
      this.#attemptBase,
      this.#attemptCapacity,
      this.#attemptCount,
    ];
    [copy.#wideClose, copy.#wideAttempt, copy.#deferred] = [this.#wideClose, this.#wideAttempt, this.#deferred];
    copy.#tenants = this.#tenants.slice();
    copy.#tenantRows = this.#tenantRows.slice();
    copy.#late = this.#late.slice(this.#lateStart); // #insertLate splices this one in place
    copy.#maxClosedAt = this.#maxClosedAt;
    const forgetLater: number[] = (this.#forgetLater = []);
    let released = false;
    return {
      index: copy,
      release: () => {
        if (released) return;
        released = true;
        this.#state.unshare();
        this.#forgetLater = null;
        for (let k = 0; k < forgetLater.length; k += 3) this.#forget(forgetLater[k]!, forgetLater[k + 1]!, forgetLater[k + 2]!);
      },
    };
  }

  /** Live rows, oldest close first, while `accept` takes their close time; at most `limit`. */
  oldest(limit: number, accept: (closedAt: number) => boolean): number[] {
    const found: number[] = [];
    let main = this.#first;
    let late = this.#lateStart;
    while (found.length < limit) {
      while (main < this.#next && (!this.#alive(main) || (this.#state.get(main - this.#rowBase) & LATE) !== 0)) main++;
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
    const forEach = (visit: (row: number) => void): void => {
      const next = this.pruneOrder();
      for (let rows = next(CHUNK); rows.length > 0; rows = next(CHUNK)) rows.forEach((row) => visit(row));
    };
    return toColumns(this, { count: this.#live, attempts: this.#attemptCount, forEach });
  }

  /**
   * The live rows in prune order, read a stretch at a time: each call answers the next at most
   * `max` (none: all given). With no late row that is row order, and no list of every row is
   * made. For rows that do not change meanwhile (a frozen copy: freeze; toColumns in one turn).
   */
  pruneOrder(): (max: number) => number[] {
    if (this.#lateStart < this.#late.length) {
      const rows = this.oldest(Number.POSITIVE_INFINITY, () => true);
      let given = 0;
      return (max) => rows.slice(given, (given = Math.min(rows.length, given + max)));
    }
    // With no late row, prune order is row order.
    let row = this.#first;
    return (max) => {
      const rows: number[] = [];
      for (; row < this.#next && rows.length < max; row++) if (this.#alive(row)) rows.push(row);
      return rows;
    };
  }

  /**
   * An index holding what `columns` describe (checked: Corrupt naming what is wrong; every
   * record offset below `offsetsBelow`, a snapshot's nextOffset): typed
   * arrays, or a snapshot's stored columns as they lie in its bytes (snapshot-columns.ts
   * storedColumns). Loaded whole, a chunk of rows at a time, and the tables filled whole: no
   * row is added one by one (at 10M rows that took seconds). `tables` 'later': not filled here;
   * they come by adoptTables (filled on another thread meanwhile: table-fill-aside.ts), and no
   * lookup may come before.
   */
  static fromColumns(
    columns: TicketIndexColumns | StoredTicketColumns,
    offsetsBelow = Number.POSITIVE_INFINITY,
    tables: 'fill' | 'later' = 'fill',
  ): TicketIndex {
    const index = new TicketIndex();
    index.#load(readColumns(columns), offsetsBelow);
    if (tables === 'fill') index.#fillTables();
    else index.#tablesLater = true;
    return index;
  }

  /**
   * The tables of an index loaded with its tables 'later' (fromColumns), filled from the same
   * columns on another thread (table-fill-aside.ts); null, or tables not of its rows, and they
   * are filled here instead.
   */
  adoptTables(tables: IndexTables | null): void {
    if (!this.#tablesLater) throw new Error('the ticket index has its tables already');
    this.#tablesLater = false;
    const keyed = tables === null ? -1 : this.#keyedIn(0, this.#next);
    const fits =
      tables !== null && tables.bySeq.size === this.#next && tables.byKey.size === keyed && tables.byRun.size === this.#attemptCount;
    if (fits) this.#useTables(tables);
    else this.#fillTables();
  }

  /** Row `row`'s key hash and state bits (for ticket-columns.ts). */
  keyHashOf(row: number): number {
    return this.#keyHash.get(row - this.#rowBase);
  }

  isKeyed(row: number): boolean {
    return (this.#state.get(row - this.#rowBase) & KEYED) !== 0;
  }

  runHashesOf(row: number): number[] {
    return Array.from({ length: this.attemptsOf(row) }, (_, n) => this.runHashOf(row, n));
  }

  /**
   * Loads checked columns into this empty index a chunk of rows at a time (each numeric column
   * read a stretch at a time: ticket-columns.ts); the tables are filled after (fromColumns).
   * Rows 0..n-1 are the columns' rows (prune order: none is late).
   */
  #load(readers: ColumnReaders, offsetsBelow: number): void {
    const [n, m] = [readers.rows, readers.attempts];
    const checks = new RowChecks(readers, offsetsBelow);
    const tenantRows = new Array<number>(readers.tenants.length).fill(0);
    const [closeDeltas, attemptDeltas] = [new Uint32Array(CHUNK), new Uint32Array(CHUNK)];
    for (let start = 0, c = 0, a = 0; start < n; start += CHUNK, c++) {
      const end = Math.min(n, start + CHUNK);
      const stretch = {
        seq: readers.seq.read(start, end),
        closedAt: readers.closedAt.read(start, end),
        tenant: readers.tenant.read(start, end),
        state: readers.state.read(start, end),
        keyHash: readers.keyHash.read(start, end),
        submittedOffset: readers.submittedOffset.read(start, end),
        closeOffset: readers.closeOffset.read(start, end),
        attemptsEnd: readers.attemptsEnd.read(start, end),
      };
      checks.rows(stretch);
      const { seq, submittedOffset, closeOffset, attemptsEnd } = stretch;
      this.#seq.loadChunk(c, seq);
      this.#closedAt.loadChunk(c, stretch.closedAt);
      this.#submitted.loadChunk(c, submittedOffset);
      this.#tenant.loadChunk(c, stretch.tenant);
      this.#state.loadChunk(c, stretch.state);
      this.#keyHash.loadChunk(c, stretch.keyHash);
      this.#attemptsEnd.loadChunk(c, attemptsEnd);
      const deferred = readers.deferredAttempts.read(start, end);
      const offsets = readers.attemptOffset.read(a, attemptsEnd[end - start - 1]!);
      checks.attemptOffsets(a, offsets);
      for (let j = 0, first = a; j < end - start; j++) {
        const row = start + j;
        tenantRows[stretch.tenant[j]!]!++;
        const base = submittedOffset[j]!;
        closeDeltas[j] = this.#delta(closeOffset[j]!, base, row, this.#wideClose);
        if (deferred[j] !== 0) this.#deferred.set(row, deferred[j]!);
        for (; a < attemptsEnd[j]!; a++) {
          attemptDeltas[a & IN_CHUNK] = this.#delta(offsets[a - first]!, base, a, this.#wideAttempt);
          if ((a & IN_CHUNK) === IN_CHUNK) this.#attemptDelta.loadChunk(a >>> CHUNK_BITS, attemptDeltas);
        }
      }
      // Each chunk of deltas as narrow as its values allow (chunked-column.ts widening).
      this.#closeDelta.loadChunk(c, closeDeltas.subarray(0, end - start));
    }
    if ((m & IN_CHUNK) !== 0) this.#attemptDelta.loadChunk(m >>> CHUNK_BITS, attemptDeltas.subarray(0, m & IN_CHUNK));
    checks.finish();
    for (let start = 0, c = 0; start < m; start += CHUNK, c++)
      this.#runHash.loadChunk(c, readers.runHash.read(start, Math.min(m, start + CHUNK)));
    // Every chunk was made by loadChunk, once (ensure would have made each, then loadChunk again).
    this.#capacity = Math.ceil(n / CHUNK) * CHUNK;
    this.#attemptCapacity = Math.ceil(m / CHUNK) * CHUNK;
    this.#tenants = readers.tenants.slice();
    this.#tenantRows = tenantRows;
    for (const [id, tenant] of readers.tenants.entries()) this.#tenantIds.set(tenant, id);
    this.#next = this.#live = n;
    this.#attemptCount = m;
    if (n > 0) this.#maxClosedAt = this.closedAtOf(n - 1);
  }

  /** The tables of freshly loaded rows (row = tag - 1), each filled whole (table-fill.ts). */
  #fillTables(): void {
    this.#useTables(fillTables(this.#loadedRows()));
  }

  #useTables(tables: IndexTables): void {
    [this.#bySeq, this.#byKey, this.#byRun] = [tables.bySeq, tables.byKey, tables.byRun];
    this.#tabled = this.#next;
  }

  /** Freshly loaded rows (#rowBase 0: rows are elements), for table-fill.ts. */
  #loadedRows(): LoadedRows {
    return {
      rows: this.#next,
      attempts: this.#attemptCount,
      seqHashes: (start, into) => this.#seq.hashes(start, into, seqHash),
      states: (start, into) => this.#state.copy(start, into),
      keyHashes: (start, into) => this.#keyHash.copy(start, into),
      attemptEnds: (start, into) => this.#attemptsEnd.copy(start, into),
      runHashes: (start, into) => this.#runHash.copy(start, into),
    };
  }

  #alive(row: number): boolean {
    return row >= this.#first && row < this.#next && (this.#state.get(row - this.#rowBase) & OUTCOME_MASK) !== 0;
  }

  #keyedHit(tag: number, hash: number): boolean {
    const row = this.#rowOfTag(tag);
    return this.#alive(row) && this.isKeyed(row) && this.keyHashOf(row) === hash;
  }

  #runHit(tag: number, hash: number): boolean {
    const row = this.#rowOfTag(tag);
    if (!this.#alive(row)) return false;
    for (let n = 0; n < this.attemptsOf(row); n++) if (this.runHashOf(row, n) === hash) return true;
    return false;
  }

  /**
   * The rows added since the tables last took rows go in: each into the first EMPTY slot of its
   * probes while the tables have room for them all (a pruned row's slot is not looked for: asking
   * whether a slot's row is alive costs a column read per slot probed), else every table is
   * rebuilt whole from the live rows (dead slots go).
   */
  #syncTables(): void {
    if (this.#tablesLater) throw new Error('the ticket index was looked up before its tables were filled (adoptTables)');
    const from = Math.max(this.#tabled, this.#first);
    const to = this.#next;
    this.#tabled = to;
    if (from >= to) return;
    const attempts = (this.#attemptsEnd.get(to - 1 - this.#rowBase) - this.#attemptStart(from)) >>> 0;
    // Each table is asked for room for the rows IT takes: a workload without keys keeps #byKey at
    // its least size, so asking it for room for every row added would rebuild all three tables
    // whole whenever more than a dozen rows came between two lookups (a group of closes).
    if (!this.#bySeq.hasRoomFor(to - from) || !this.#byKey.hasRoomFor(this.#keyedIn(from, to)) || !this.#byRun.hasRoomFor(attempts))
      return this.#rebuildTables();
    for (let row = from; row < to; row++) {
      if (!this.#alive(row)) continue;
      const tag = (row % TAG_SPACE) + 1;
      this.#bySeq.insert(seqHash(this.seqOf(row)), tag);
      if (this.isKeyed(row)) this.#byKey.insert(this.keyHashOf(row), tag);
      const [start, end] = [this.#attemptStart(row), this.#attemptsEnd.get(row - this.#rowBase)];
      for (let a = start; a !== end; a = (a + 1) >>> 0) this.#byRun.insert(this.#runHash.get(this.#attemptIndex(a)), tag);
    }
  }

  /** How many of rows [from, to) are keyed. */
  #keyedIn(from: number, to: number): number {
    let keyed = 0;
    for (let row = from; row < to; row++) if (this.isKeyed(row)) keyed++;
    return keyed;
  }

  /**
   * Every table emptied and filled whole from the live rows (RowTable.fill, sized for them at
   * half use): their tags, seq hashes, key hashes and run hashes gathered a row at a time first.
   */
  #rebuildTables(): void {
    const [live, attempts] = [this.#live, this.#attemptCount];
    const rows = new Uint32Array(live); // elements (row - #rowBase) of the live rows
    const rowTags = new Uint32Array(live);
    const keyedTags = new Uint32Array(live);
    const keyHashes = new Uint32Array(live);
    const runTags = new Uint32Array(attempts);
    const runHashes = new Uint32Array(attempts);
    let [n, keyed, m] = [0, 0, 0];
    for (let row = this.#first; row < this.#next; row++) {
      const i = row - this.#rowBase;
      const state = this.#state.get(i);
      if ((state & OUTCOME_MASK) === 0) continue;
      const tag = (row % TAG_SPACE) + 1;
      rows[n] = i;
      rowTags[n++] = tag;
      if ((state & KEYED) !== 0) {
        keyedTags[keyed] = tag;
        keyHashes[keyed++] = this.#keyHash.get(i);
      }
      const [start, end] = [this.#attemptStart(row), this.#attemptsEnd.get(i)];
      for (let a = start; a !== end; a = (a + 1) >>> 0) {
        runTags[m] = tag;
        runHashes[m++] = this.#runHash.get(this.#attemptIndex(a));
      }
    }
    const scratch = new FillScratch();
    const rowBase = this.#rowBase;
    this.#bySeq.fill(
      n,
      (start, into) => {
        for (let j = 0; j < into.length; j++) into[j] = seqHash(this.#seq.get(rowBase + rows[start + j]!, rows[start + j]!));
      },
      rowTags,
      scratch,
    );
    this.#byKey.fill(keyed, (start, into) => into.set(keyHashes.subarray(start, start + into.length)), keyedTags, scratch);
    this.#byRun.fill(m, (start, into) => into.set(runHashes.subarray(start, start + into.length)), runTags, scratch);
  }

  #rowOfTag(tag: number): number {
    return this.#first + ((tag - 1 - (this.#first % TAG_SPACE) + TAG_SPACE) % TAG_SPACE);
  }

  #attemptStart(row: number): number {
    return row === this.#rowBase ? this.#baseAttemptStart : this.#attemptsEnd.get(row - this.#rowBase - 1);
  }

  #attemptIndex(attempt: number): number {
    return (attempt - this.#attemptBase) >>> 0;
  }

  /** Row `row` (element `i`, its attempts from `start`) lies at `records`. */
  #setRecords(row: number, i: number, start: number, records: TicketRecords): void {
    const base = records.submittedOffset;
    this.#submitted.set(row, i, base);
    this.#closeDelta.set(i, this.#delta(records.closeOffset, base, row, this.#wideClose));
    const offsets = records.attemptOffsets;
    for (let n = 0; n < offsets.length; n++) {
      const a = (start + n) >>> 0;
      this.#attemptDelta.set(this.#attemptIndex(a), this.#delta(offsets[n]!, base, a, this.#wideAttempt));
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
    if (tenant === this.#lastTenant) return this.#lastTenantId;
    let id = this.#tenantIds.get(tenant);
    if (id === undefined) {
      id = this.#tenants.length;
      this.#tenants.push(tenant);
      this.#tenantRows.push(0);
      this.#tenantIds.set(tenant, id);
    }
    this.#lastTenant = tenant;
    this.#lastTenantId = id;
    return id;
  }

  /**
   * Puts a late row in #late, after the last live row that closed no later. Rows removed out of
   * prune order (a tombstone) stay in the list until they reach its front (#trimFront) and are
   * stepped over: their close time may be forgotten already, or their chunk dropped.
   */
  #insertLate(row: number): void {
    const at = this.closedAtOf(row);
    let index = this.#late.length;
    for (; index > this.#lateStart; index--) {
      const before = this.#late[index - 1]!;
      if (this.#alive(before) && this.closedAtOf(before) <= at) break;
    }
    this.#late.splice(index, 0, row);
  }

  /** Moves #first past removed rows; drops the chunks wholly before it. */
  #trimFront(): void {
    while (this.#first < this.#next && !this.#alive(this.#first)) this.#first++;
    while (this.#lateStart < this.#late.length && !this.#alive(this.#late[this.#lateStart]!)) this.#lateStart++;
    if (this.#lateStart > 64 && this.#lateStart * 2 > this.#late.length) {
      this.#late = this.#late.slice(this.#lateStart);
      this.#lateStart = 0;
    }
    const chunks = Math.floor((this.#first - this.#rowBase) / CHUNK);
    if (chunks > 0) this.#dropChunks(chunks);
  }

  /** The first `chunks` chunks of rows (all removed) go, and the attempt chunks wholly before the rows left. */
  #dropChunks(chunks: number): void {
    const rowBase = this.#rowBase + chunks * CHUNK;
    const baseAttemptStart = this.#attemptStart(rowBase);
    for (const column of [this.#seq, this.#closedAt, this.#submitted, this.#tenant, this.#state, this.#keyHash]) column.dropFront(chunks);
    for (const column of [this.#closeDelta, this.#attemptsEnd]) column.dropFront(chunks);
    this.#rowBase = rowBase;
    this.#capacity -= chunks * CHUNK;
    this.#baseAttemptStart = baseAttemptStart;
    const attemptChunks = Math.floor(this.#attemptIndex(baseAttemptStart) / CHUNK);
    this.#attemptDelta.dropFront(attemptChunks);
    this.#runHash.dropFront(attemptChunks);
    this.#attemptBase = (this.#attemptBase + attemptChunks * CHUNK) >>> 0;
    this.#attemptCapacity -= attemptChunks * CHUNK;
  }

  /** Attempt elements in use: up to the end of the last row's attempts. */
  #ensureRows(more: number): void {
    const needed = this.#next + more - this.#rowBase;
    if (needed <= this.#capacity) return;
    for (const column of [this.#seq, this.#closedAt, this.#submitted, this.#tenant, this.#state, this.#keyHash]) column.ensure(needed);
    for (const column of [this.#closeDelta, this.#attemptsEnd]) column.ensure(needed);
    this.#capacity = Math.ceil(needed / CHUNK) * CHUNK;
  }

  /** Room for attempt elements [0, needed) (from #attemptBase on). */
  #ensureAttempts(needed: number): void {
    if (needed <= this.#attemptCapacity) return;
    this.#attemptDelta.ensure(needed);
    this.#runHash.ensure(needed);
    this.#attemptCapacity = Math.ceil(needed / CHUNK) * CHUNK;
  }
}
