/**
 * What a command of the command line is: a name, a one-line summary, its positional
 * arguments and options (which --help lists), and run(), which answers an exit code.
 * The dispatcher (dispatch.ts) parses the options with node:util parseArgs before run().
 *
 * Exit codes: 0 ok; 1 refused (a RunlogError from the queue, the server or the log, other
 * than InvalidArgument, or any other failure); 2 usage (an unknown command, a bad flag or
 * value, or InvalidArgument: the arguments were wrong, whoever noticed).
 */
import type { Readable, Writable } from 'node:stream';

export const EXIT_OK = 0;
export const EXIT_REFUSED = 1;
export const EXIT_USAGE = 2;

/** Where a command reads and writes: the process's streams, or a test's. */
export interface CliIo {
  readonly stdout: Writable;
  readonly stderr: Writable;
  readonly stdin: Readable;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Aborted on SIGINT/SIGTERM (and when stdout's reader went away): the commands that stop on a signal (tail, export) end cleanly. */
  readonly signal: AbortSignal;
}

export interface OptionSpec {
  readonly type: 'string' | 'boolean';
  readonly short?: string;
  readonly multiple?: boolean;
  /** The value's placeholder in --help (string options), e.g. DIR. */
  readonly value?: string;
  readonly help: string;
}

export type OptionSpecs = Readonly<Record<string, OptionSpec>>;

export type OptionValues = Readonly<Record<string, string | boolean | (string | boolean)[] | undefined>>;

export interface CommandArgs {
  readonly values: OptionValues;
  readonly positionals: readonly string[];
  readonly io: CliIo;
}

export interface Command {
  readonly name: string;
  readonly summary: string;
  /** The positional arguments, as --help shows them, e.g. `<tenant> <entryId>` ('' for none). */
  readonly usage: string;
  /** How many positional arguments it takes. */
  readonly positionals: { readonly min: number; readonly max: number };
  readonly options: OptionSpecs;
  /** More text for --help, after the options (optional). */
  readonly details?: string;
  /**
   * It watches io.signal and ends itself at the first SIGINT or SIGTERM (tail stops following,
   * export removes the file it was writing); a second exits at once. A command without it
   * exits at once at the first (130): it only reads, or its call is already sent.
   */
  readonly stopsOnSignal?: true;
  run(args: CommandArgs): Promise<number>;
}

/**
 * A command that parses its own arguments (`runlog serve`, whose options live with the
 * server's configuration): it gets the words after its name and answers an exit code.
 */
export interface RawCommand {
  readonly name: string;
  readonly summary: string;
  readonly raw: (argv: readonly string[], io: CliIo) => Promise<number>;
}

export type AnyCommand = Command | RawCommand;

/** A mistake in the command line itself: exit 2, with the command's usage. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}
