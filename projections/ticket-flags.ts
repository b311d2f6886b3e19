/** The ticket index's row state bits (ticket-index.ts), shared with its columns (ticket-columns.ts), which store the low four. */
import type { Outcome } from '../src/events/types.ts';

/** Outcome codes: OUTCOMES index + 1 (0: a removed row). */
export const OUTCOMES: readonly Outcome[] = ['succeeded', 'failed', 'cancelled', 'expired', 'threadDeleted'];
/** Each outcome's code (OUTCOMES index + 1), read by name: no search of OUTCOMES per row a replay adds. */
export const OUTCOME_CODES = Object.freeze(Object.fromEntries(OUTCOMES.map((outcome, i) => [outcome, i + 1]))) as Readonly<
  Record<Outcome, number>
>;
/** state bits 0-2: the outcome's code. */
export const OUTCOME_MASK = 7;
/** state bit 3: the ticket has a submission key. */
export const KEYED = 8;
