/**
 * The queue's onWork listeners. They are called a microtask after a command that may have made
 * work takeable is decided (partition.ts #wakeSoon; or when a rebuilt partition serves again): a
 * listener that throws (or, async, rejects) must not turn a command's answer into its error nor
 * end the process, so what it throws becomes a warning (RUNLOG_LISTENER).
 */
import { callListener } from '../call-listener.ts';
import { describe, requireFunction } from '../validation/index.ts';
import type { RunlogWarning } from '../warnings.ts';

export class WorkListeners {
  readonly #listeners = new Set<() => void>();

  constructor(private readonly warn: (warning: RunlogWarning) => void) {}

  /** Adds `listener`; answers the function that removes it. */
  add(listener: () => void): () => void {
    this.#listeners.add(requireFunction('onWork listener', listener));
    return () => this.#listeners.delete(listener);
  }

  notify(): void {
    for (const listener of this.#listeners) {
      callListener(listener, [], (error) => {
        this.warn({ code: 'RUNLOG_LISTENER', message: `an onWork listener threw: ${describe(error)}` });
      });
    }
  }
}
