/**
 * A run's abort signal, made only if the handler reads it: most handlers never do, and an
 * AbortController per run (with the exception its abort() makes) was a measurable share of
 * the worker's CPU. `abort` before any read stores the reason; a later read gets a signal
 * aborted with it. The run's own supervision listens here (`onAbort`), not on the signal.
 */
export class RunSignal {
  #controller: AbortController | null = null;
  #aborted = false;
  #reason: unknown = undefined;
  #listener: (() => void) | null = null;

  get aborted(): boolean {
    return this.#aborted;
  }

  /** The handler's AbortSignal: made on first read, aborted already if the run was. */
  get signal(): AbortSignal {
    if (this.#controller === null) {
      this.#controller = new AbortController();
      if (this.#aborted) this.#controller.abort(this.#reason);
    }
    return this.#controller.signal;
  }

  abort(reason: unknown): void {
    if (this.#aborted) return;
    this.#aborted = true;
    this.#reason = reason;
    this.#controller?.abort(reason);
    this.#listener?.();
  }

  /** Calls `listener` once the run aborts (at once if it has); one listener. */
  onAbort(listener: () => void): void {
    if (this.#aborted) listener();
    else this.#listener = listener;
  }

  /** Forgets the listener (the run settled). */
  offAbort(): void {
    this.#listener = null;
  }
}
