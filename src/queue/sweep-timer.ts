/**
 * The retention timer: runs a sweep every `everyMs` until stopped (the timer does not keep the
 * process alive). A failed sweep is tried again at the next tick; its failure is a warning
 * (RUNLOG_SWEEP), unless the queue stopped.
 */
import { isRunlogError } from '../errors.ts';
import type { RunlogWarning } from '../warnings.ts';

export class SweepTimer {
  #timer: NodeJS.Timeout | undefined;

  constructor(private readonly warn: (warning: RunlogWarning) => void) {}

  start(everyMs: number, sweep: () => Promise<unknown>): void {
    this.stop();
    this.#timer = setInterval(() => void sweep().catch((error: unknown) => this.#report(error)), everyMs);
    this.#timer.unref();
  }

  stop(): void {
    clearInterval(this.#timer);
  }

  #report(error: unknown): void {
    if (isRunlogError(error, 'Stopped')) return;
    this.warn({ code: 'RUNLOG_SWEEP', message: `runlog retention sweep failed: ${String(error)}` });
  }
}
