/**
 * What the bench started, undone in reverse order at the end: on success, on a failure and on
 * Ctrl-C (SIGINT) or SIGTERM. Each undo runs even if an earlier one failed.
 */
export class Scope {
  private readonly undos: (() => Promise<void>)[] = [];
  private closing: Promise<void> | null = null;

  /** Registers `undo` to run at close (last registered, first run). */
  defer(undo: () => Promise<void>): void {
    this.undos.push(undo);
  }

  close(): Promise<void> {
    this.closing ??= this.undoAll();
    return this.closing;
  }

  /** Closes, then exits, on SIGINT (130), SIGTERM (143) and an error nobody caught (1; a peer's emitter may throw one). */
  closeOnExit(): void {
    const exit = (why: unknown, code: number): void => {
      console.error(why, '\nstopping what the bench started…');
      void this.close().finally(() => process.exit(code));
    };
    process.once('SIGINT', () => exit('SIGINT', 130));
    process.once('SIGTERM', () => exit('SIGTERM', 143));
    process.once('uncaughtException', (error) => exit(error, 1));
    process.once('unhandledRejection', (error) => exit(error, 1));
  }

  private async undoAll(): Promise<void> {
    for (const undo of this.undos.reverse()) {
      try {
        await undo();
      } catch (error) {
        console.error('cleanup step failed:', error);
      }
    }
  }
}
