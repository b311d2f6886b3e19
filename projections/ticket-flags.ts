/** The ticket index's row state bits (ticket-index.ts), shared with its columns (ticket-columns.ts), which store the low four. */
import type { Outcome } from '../src/events/types.ts';

/** Outcome codes: OUTCOMES index + 1 (0: a removed row). */
export const OUTCOMES: readonly Outcome[] = ['succeeded', 'failed', 'cancelled', 'expired', 'threadDeleted'];
/** state bits 0-2: the outcome's code. */
export const OUTCOME_MASK = 7;
/** state bit 3: the ticket has a submission key. */
export const KEYED = 8;
