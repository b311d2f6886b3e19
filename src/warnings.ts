/**
 * Warnings: trouble runlog repaired or worked around, which a person should hear of (a torn
 * tail cut on open, a stale lock taken over, the wall clock stepping). Each has a stable
 * `code` (upper snake case, prefixed RUNLOG_) and a message naming what it is about.
 * Listeners are `RunQueueOptions.onWarning` and `FileLogOptions.onWarning`; by default a
 * warning goes to `process.emitWarning` (printed on stderr by Node).
 */
import { callListener } from './call-listener.ts';
import { describe } from './validation/index.ts';

export interface RunlogWarning {
  code: string;
  message: string;
}

export type WarningListener = (warning: RunlogWarning) => void;

export const emitProcessWarning: WarningListener = ({ code, message }) => process.emitWarning(message, { code });

/**
 * Hands each warning to a listener and counts them by code (`(await queue.metrics()).warnings`).
 * A listener that throws (or, async, rejects) does not break what reported the warning:
 * the warning and the listener's failure go to process.emitWarning instead.
 */
export class WarningCounter {
  readonly #listener: WarningListener;
  readonly #counts = new Map<string, number>();

  constructor(listener: WarningListener = emitProcessWarning) {
    this.#listener = listener;
  }

  readonly report = (warning: RunlogWarning): void => {
    this.#counts.set(warning.code, (this.#counts.get(warning.code) ?? 0) + 1);
    callListener(this.#listener, [warning], (error) => {
      emitProcessWarning({ code: warning.code, message: `${warning.message} (onWarning threw: ${describe(error)})` });
    });
  };

  /** How many warnings of each code were reported so far. */
  counts(): Record<string, number> {
    return Object.fromEntries(this.#counts);
  }
}
