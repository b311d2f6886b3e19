/**
 * The ticket index as columns (typed arrays and a string table), for snapshots: what a
 * snapshot stores of the closed tickets (/work notes INDEX-COLUMNS.md; the snapshot codec
 * writes exactly these). Rows come oldest close first, so rebuilding adds them in prune order.
 */
import { RunlogError } from '../src/errors.ts';
import type { Outcome } from '../src/events/types.ts';
import { ColumnReader } from './column-reader.ts';
import { KEYED, OUTCOMES, OUTCOME_MASK } from './ticket-flags.ts';

export const TICKET_INDEX_COLUMNS_VERSION = 1;

export interface TicketIndexColumns {
  /** Format of these columns: 1. */
  version: number;
  /** The tenants the rows name, by index. */
  tenants: string[];
  // One row per retained closed ticket, oldest close first.
  seq: Float64Array;
  /** Non-decreasing down the rows. */
  closedAt: Float64Array;
  /** Index into `tenants`. */
  tenant: Uint32Array;
  /** bits 0-2: outcome (1 succeeded, 2 failed, 3 cancelled, 4 expired, 5 threadDeleted); bit 3: keyed. */
  state: Uint8Array;
  /** hash32(submissionKeyId(tenant, thread, key)) when keyed, else 0. */
  keyHash: Uint32Array;
  deferredAttempts: Uint32Array;
  /** Offset of the ticket's Submitted record. */
  submittedOffset: Float64Array;
  /** Offset of its closing record. */
  closeOffset: Float64Array;
  /** Cumulative attempt counts: row i's attempts are attempt rows attemptsEnd[i-1] (0 for i = 0) to attemptsEnd[i] - 1. */
  attemptsEnd: Uint32Array;
  // One row per attempt of those tickets, attempt 1 of each first.
  attemptOffset: Float64Array;
  /** hash32(threadKey(tenant, thread) + '\u0000' + runId). */
  runHash: Uint32Array;
}

/** What toColumns reads of the index (ticket-index.ts TicketIndex), row by row. */
export interface IndexRows {
  readonly tenants: readonly string[];
  tenantIdOf(row: number): number;
  seqOf(row: number): number;
  closedAtOf(row: number): number;
  outcomeOf(row: number): Outcome;
  isKeyed(row: number): boolean;
  keyHashOf(row: number): number;
  deferredAttemptsOf(row: number): number;
  submittedOffsetOf(row: number): number;
  closeOffsetOf(row: number): number;
  attemptsOf(row: number): number;
  attemptOffsetOf(row: number, n: number): number;
  runHashOf(row: number, n: number): number;
}

/** Rows to write as columns: how many, with how many attempts, and each in prune order. */
export interface RowsInPruneOrder {
  count: number;
  attempts: number;
  forEach(visit: (row: number) => void): void;
}

/** The columns of `rows` of `index` (rows in prune order, all settled), column by column without an object per row. */
export function toColumns(index: IndexRows, rows: RowsInPruneOrder): TicketIndexColumns {
  const columns: TicketIndexColumns = { version: TICKET_INDEX_COLUMNS_VERSION, tenants: [], ...emptyColumns(rows.count, rows.attempts) };
  // Tenants numbered in the order the rows first name them (the index's own ids may name pruned tenants).
  const renumbered = new Int32Array(index.tenants.length).fill(-1);
  let [i, a] = [0, 0];
  rows.forEach((row) => {
    const id = index.tenantIdOf(row);
    if (renumbered[id]! < 0) renumbered[id] = columns.tenants.push(index.tenants[id]!) - 1;
    a = copyRow(index, row, renumbered[id]!, columns, i++, a, 0);
  });
  return columns;
}

/** The typed columns of TicketIndexColumns. */
export type RowColumns = Omit<TicketIndexColumns, 'version' | 'tenants'>;

/** Typed columns for `rows` rows with `attempts` attempts in all, zeroed. */
export function emptyColumns(rows: number, attempts: number): RowColumns {
  return {
    seq: new Float64Array(rows),
    closedAt: new Float64Array(rows),
    tenant: new Uint32Array(rows),
    state: new Uint8Array(rows),
    keyHash: new Uint32Array(rows),
    deferredAttempts: new Uint32Array(rows),
    submittedOffset: new Float64Array(rows),
    closeOffset: new Float64Array(rows),
    attemptsEnd: new Uint32Array(rows),
    attemptOffset: new Float64Array(attempts),
    runHash: new Uint32Array(attempts),
  };
}

/**
 * Row `row` of `index` into element `i` of `columns`' row columns, its tenant written as
 * `tenant`, and its attempts into the attempt columns from element `a` on; its attempts' end
 * is written as `attemptsBefore` + the element after its last. Answers that element.
 */
export function copyRow(
  index: IndexRows,
  row: number,
  tenant: number,
  columns: RowColumns,
  i: number,
  a: number,
  attemptsBefore: number,
): number {
  columns.seq[i] = index.seqOf(row);
  columns.closedAt[i] = index.closedAtOf(row);
  columns.tenant[i] = tenant;
  const keyed = index.isKeyed(row);
  columns.state[i] = (OUTCOMES.indexOf(index.outcomeOf(row)) + 1) | (keyed ? KEYED : 0);
  columns.keyHash[i] = keyed ? index.keyHashOf(row) : 0;
  columns.deferredAttempts[i] = index.deferredAttemptsOf(row);
  columns.submittedOffset[i] = index.submittedOffsetOf(row);
  columns.closeOffset[i] = index.closeOffsetOf(row);
  for (let k = 0, attempts = index.attemptsOf(row); k < attempts; k++, a++) {
    columns.attemptOffset[a] = index.attemptOffsetOf(row, k);
    columns.runHash[a] = index.runHashOf(row, k);
  }
  columns.attemptsEnd[i] = attemptsBefore + a;
  return a;
}

/** The columns being loaded: each numeric one as a reader (a typed array's views, or a snapshot's bytes copied a stretch at a time). */
export interface ColumnReaders {
  tenants: readonly string[];
  rows: number;
  attempts: number;
  seq: ColumnReader<'f64'>;
  closedAt: ColumnReader<'f64'>;
  tenant: ColumnReader<'u32'>;
  state: ColumnReader<'u8'>;
  keyHash: ColumnReader<'u32'>;
  deferredAttempts: ColumnReader<'u32'>;
  submittedOffset: ColumnReader<'f64'>;
  closeOffset: ColumnReader<'f64'>;
  attemptsEnd: ColumnReader<'u32'>;
  attemptOffset: ColumnReader<'f64'>;
  runHash: ColumnReader<'u32'>;
}

const KINDS = {
  seq: 'f64',
  closedAt: 'f64',
  tenant: 'u32',
  state: 'u8',
  keyHash: 'u32',
  deferredAttempts: 'u32',
  submittedOffset: 'f64',
  closeOffset: 'f64',
  attemptsEnd: 'u32',
  attemptOffset: 'f64',
  runHash: 'u32',
} as const;
const ATTEMPT_COLUMNS: ReadonlySet<string> = new Set(['attemptOffset', 'runHash']);

/**
 * Readers of `columns` (TicketIndexColumns, or a snapshot's stored fields: snapshot-columns.ts
 * storedColumns), once every column is there, of its type, and as long as the others; the
 * rows' values are checked as they are read (RowChecks). Corrupt naming what is wrong.
 */
export function readColumns(columns: TicketIndexColumns | Readonly<Record<string, unknown>>): ColumnReaders {
  const fields = columns as Readonly<Record<string, unknown>>;
  if (fields['version'] !== TICKET_INDEX_COLUMNS_VERSION)
    corruptColumns(`version ${String(fields['version'])} is not ${TICKET_INDEX_COLUMNS_VERSION}`);
  const tenants = fields['tenants'];
  if (!Array.isArray(tenants) || tenants.some((t) => typeof t !== 'string')) corruptColumns('tenants is not a list of strings');
  if (new Set(tenants).size !== tenants.length) corruptColumns('tenants names a tenant twice');
  const readers: Record<string, ColumnReader<'f64' | 'u32' | 'u8'>> = {};
  for (const [name, kind] of Object.entries(KINDS)) {
    const reader = ColumnReader.of(fields[name], kind);
    if (reader === null) corruptColumns(`${name} is not a column of ${kind}`);
    readers[name] = reader;
  }
  const rows = readers['seq']!.length;
  const attempts = readers['attemptOffset']!.length;
  for (const [name, reader] of Object.entries(readers)) {
    const length = ATTEMPT_COLUMNS.has(name) ? attempts : rows;
    if (reader.length !== length) corruptColumns(`${name} holds ${reader.length} elements, not ${length}`);
  }
  return { tenants: tenants as string[], rows, attempts, ...readers } as unknown as ColumnReaders;
}

/**
 * The rows' checks, stretch by stretch in row order (the index loads each stretch as it is
 * checked): seqs and offsets are integers from 0 a float64 holds exactly (offsets below what
 * the snapshot covers, a close after its Submitted), close times finite
 * and non-decreasing, tenants and states in range, no key hash on a row without a key,
 * attempt ends non-decreasing and within the attempts; then, at `finish`, every attempt
 * belongs to a row and no two rows have one seq.
 */
export class RowChecks {
  #row = 0;
  #lastClosedAt = Number.NEGATIVE_INFINITY;
  #lastEnd = 0;
  #minSeq = Number.POSITIVE_INFINITY;
  #maxSeq = 0;

  /** `below`: every record offset lies below it (the offset a snapshot covers up to), when known. */
  constructor(
    private readonly readers: ColumnReaders,
    private readonly below = Number.POSITIVE_INFINITY,
  ) {}

  /** Checks rows [start, start + seq.length): the stretch's arrays, as read. */
  rows(stretch: {
    seq: Float64Array;
    closedAt: Float64Array;
    tenant: Uint32Array;
    state: Uint8Array;
    keyHash: Uint32Array;
    submittedOffset: Float64Array;
    closeOffset: Float64Array;
    attemptsEnd: Uint32Array;
  }): void {
    const { seq, closedAt, tenant, state, keyHash, submittedOffset, closeOffset, attemptsEnd } = stretch;
    const tenants = this.readers.tenants.length;
    const attempts = this.readers.attempts;
    for (let j = 0; j < seq.length; j++, this.#row++) {
      const i = this.#row;
      if (!isOffset(seq[j]!)) corruptColumns(`seq[${i}] is ${seq[j]}`);
      if (seq[j]! < this.#minSeq) this.#minSeq = seq[j]!;
      if (seq[j]! > this.#maxSeq) this.#maxSeq = seq[j]!;
      if (!Number.isFinite(closedAt[j]!)) corruptColumns(`closedAt[${i}] is ${closedAt[j]}`);
      if (closedAt[j]! < this.#lastClosedAt) corruptColumns(`closedAt[${i}] is before closedAt[${i - 1}]`);
      this.#lastClosedAt = closedAt[j]!;
      if (tenant[j]! >= tenants) corruptColumns(`tenant[${i}] names no tenant`);
      const outcome = state[j]! & OUTCOME_MASK;
      if (outcome === 0 || outcome > OUTCOMES.length || (state[j]! & ~(OUTCOME_MASK | KEYED)) !== 0)
        corruptColumns(`state[${i}] is ${state[j]}`);
      if ((state[j]! & KEYED) === 0 && keyHash[j] !== 0) corruptColumns(`keyHash[${i}] is ${keyHash[j]} for a row with no key`);
      if (!isOffset(submittedOffset[j]!) || submittedOffset[j]! >= this.below)
        corruptColumns(`submittedOffset[${i}] is ${submittedOffset[j]}`);
      if (!isOffset(closeOffset[j]!) || closeOffset[j]! >= this.below) corruptColumns(`closeOffset[${i}] is ${closeOffset[j]}`);
      if (closeOffset[j]! <= submittedOffset[j]!) corruptColumns(`closeOffset[${i}] is not after submittedOffset[${i}]`);
      const end = attemptsEnd[j]!;
      if (end < this.#lastEnd || end > attempts) corruptColumns(`attemptsEnd[${i}] is ${end}`);
      this.#lastEnd = end;
    }
  }

  /** Checks attempts' offsets (any stretch). */
  attemptOffsets(start: number, offsets: Float64Array): void {
    for (let k = 0; k < offsets.length; k++) {
      if (!isOffset(offsets[k]!) || offsets[k]! >= this.below) corruptColumns(`attemptOffset[${start + k}] is ${offsets[k]}`);
    }
  }

  /** After every row: all attempts belong to a row, and no two rows have one seq. */
  finish(): void {
    const attempts = this.readers.attempts;
    if (this.#lastEnd !== attempts) corruptColumns(`${attempts - this.#lastEnd} attempts belong to no row`);
    if (this.readers.rows > 0) this.#checkSeqsUnique();
  }

  /** A bitmap over the seqs' range when it is at most 64 bits a row (retained seqs are dense), else a sorted copy. */
  #checkSeqsUnique(): void {
    const [min, max, reader] = [this.#minSeq, this.#maxSeq, this.readers.seq];
    const n = this.readers.rows;
    if (max - min < 64 * n + 65_536) {
      const seen = new Uint8Array(Math.floor((max - min) / 8) + 1);
      for (let start = 0; start < n; start += STRETCH) {
        const seq = reader.read(start, Math.min(n, start + STRETCH));
        for (let j = 0; j < seq.length; j++) {
          const at = seq[j]! - min;
          const [byte, bit] = [Math.floor(at / 8), 1 << (at % 8)];
          if ((seen[byte]! & bit) !== 0) corruptColumns(`seq ${seq[j]} is in two rows`);
          seen[byte]! |= bit;
        }
      }
      return;
    }
    const sorted = Float64Array.from(reader.read(0, n)).sort();
    for (let i = 1; i < sorted.length; i++) if (sorted[i] === sorted[i - 1]) corruptColumns(`seq ${sorted[i]} is in two rows`);
  }
}

/** Rows read at a time when only one column is wanted. */
const STRETCH = 65_536;

/** A log offset or a seq: an integer from 0 that a float64 holds exactly. */
function isOffset(value: number): boolean {
  return Number.isSafeInteger(value) && value >= 0;
}

export function corruptColumns(what: string): never {
  throw new RunlogError('Corrupt', `the ticket index's columns are damaged: ${what}`);
}
