/**
 * The ticket index as columns (typed arrays and a string table), for snapshots: what a
 * snapshot stores of the closed tickets (/work notes INDEX-COLUMNS.md; the snapshot codec
 * writes exactly these). Rows come oldest close first, so rebuilding adds them in prune order.
 */
import { RunlogError } from '../src/errors.ts';
import type { ClosingTicket, TicketIndex, TicketRecords } from './ticket-index.ts';
import { KEYED, OUTCOMES, OUTCOME_MASK } from './ticket-index.ts';

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

/** The columns of `rows` of `index` (rows in prune order, all settled). */
export function toColumns(index: TicketIndex, rows: readonly number[]): TicketIndexColumns {
  const n = rows.length;
  const tenants: string[] = [];
  const tenantIds = new Map<string, number>();
  const columns: TicketIndexColumns = {
    version: TICKET_INDEX_COLUMNS_VERSION,
    tenants,
    seq: new Float64Array(n),
    closedAt: new Float64Array(n),
    tenant: new Uint32Array(n),
    state: new Uint8Array(n),
    keyHash: new Uint32Array(n),
    deferredAttempts: new Uint32Array(n),
    submittedOffset: new Float64Array(n),
    closeOffset: new Float64Array(n),
    attemptsEnd: new Uint32Array(n),
    attemptOffset: new Float64Array(0),
    runHash: new Uint32Array(0),
  };
  const attemptOffsets: number[] = [];
  const runHashes: number[] = [];
  rows.forEach((row, i) => {
    const tenant = index.tenantOf(row);
    let id = tenantIds.get(tenant);
    if (id === undefined) tenantIds.set(tenant, (id = tenants.push(tenant) - 1));
    const records = index.recordsOf(row)!;
    columns.seq[i] = index.seqOf(row);
    columns.closedAt[i] = index.closedAtOf(row);
    columns.tenant[i] = id;
    columns.state[i] = (OUTCOMES.indexOf(index.outcomeOf(row)) + 1) | (index.isKeyed(row) ? KEYED : 0);
    columns.keyHash[i] = index.keyHashOf(row);
    columns.deferredAttempts[i] = index.deferredAttemptsOf(row);
    columns.submittedOffset[i] = records.submittedOffset;
    columns.closeOffset[i] = records.closeOffset;
    attemptOffsets.push(...records.attemptOffsets);
    runHashes.push(...index.runHashesOf(row));
    columns.attemptsEnd[i] = attemptOffsets.length;
  });
  columns.attemptOffset = Float64Array.from(attemptOffsets);
  columns.runHash = Uint32Array.from(runHashes);
  return columns;
}

/** Checks `columns` and hands each row to `add`, in order. */
export function fromColumns(columns: TicketIndexColumns, add: (ticket: ClosingTicket, records: TicketRecords) => void): void {
  const n = checkShape(columns);
  let attempt = 0;
  for (let i = 0; i < n; i++) {
    const end = columns.attemptsEnd[i]!;
    const state = columns.state[i]!;
    const outcome = OUTCOMES[(state & OUTCOME_MASK) - 1];
    const tenant = columns.tenants[columns.tenant[i]!];
    if (end < attempt || end > columns.attemptOffset.length) corrupt(`attemptsEnd[${i}] is ${end}`);
    if (outcome === undefined || (state & ~(OUTCOME_MASK | KEYED)) !== 0) corrupt(`state[${i}] is ${state}`);
    if (tenant === undefined) corrupt(`tenant[${i}] names no tenant`);
    if (i > 0 && columns.closedAt[i]! < columns.closedAt[i - 1]!) corrupt(`closedAt[${i}] is before closedAt[${i - 1}]`);
    add(
      {
        seq: columns.seq[i]!,
        tenant: tenant!,
        outcome: outcome!,
        closedAt: columns.closedAt[i]!,
        keyHash: (state & KEYED) === 0 ? null : columns.keyHash[i]!,
        runHashes: Array.from(columns.runHash.subarray(attempt, end)),
        deferredAttempts: columns.deferredAttempts[i]!,
      },
      {
        submittedOffset: columns.submittedOffset[i]!,
        closeOffset: columns.closeOffset[i]!,
        attemptOffsets: Array.from(columns.attemptOffset.subarray(attempt, end)),
      },
    );
    attempt = end;
  }
  if (attempt !== columns.attemptOffset.length) corrupt(`${columns.attemptOffset.length - attempt} attempts belong to no row`);
}

/** The row count, once every column is there, of its type, and as long as the others. */
function checkShape(columns: TicketIndexColumns): number {
  if (columns.version !== TICKET_INDEX_COLUMNS_VERSION) corrupt(`version ${columns.version} is not ${TICKET_INDEX_COLUMNS_VERSION}`);
  if (!Array.isArray(columns.tenants) || columns.tenants.some((t) => typeof t !== 'string')) corrupt('tenants is not a list of strings');
  const n = columns.seq?.length;
  const rowColumns = [
    'seq',
    'closedAt',
    'tenant',
    'state',
    'keyHash',
    'deferredAttempts',
    'submittedOffset',
    'closeOffset',
    'attemptsEnd',
  ] as const;
  for (const name of rowColumns) {
    if (!ArrayBuffer.isView(columns[name]) || columns[name].length !== n) corrupt(`${name} is not a typed array of ${n} rows`);
  }
  if (columns.runHash?.length !== columns.attemptOffset?.length) corrupt('runHash and attemptOffset differ in length');
  return n;
}

function corrupt(what: string): never {
  throw new RunlogError('Corrupt', `the ticket index's columns are damaged: ${what}`);
}
