/**
 * The command line's dispatcher: finds the command named by the first word, parses the
 * rest with node:util parseArgs (strict: an unknown flag, a missing value or a stray
 * argument is a usage error), answers --help, runs the command and turns what it throws
 * into an exit code and one message on stderr (command.ts lists the codes).
 */
import { parseArgs } from 'node:util';
import { isRunlogError } from '../errors.ts';
import { EXIT_OK, EXIT_REFUSED, EXIT_USAGE, UsageError, type AnyCommand, type CliIo, type Command } from './command.ts';
import { commandHelp, mainHelp, usageLine } from './help.ts';
import { write } from './output.ts';

/** Runs `argv` (the words after `runlog`) against `commands`; answers the exit code. */
export async function dispatch(commands: readonly AnyCommand[], argv: readonly string[], io: CliIo): Promise<number> {
  const [name, ...rest] = argv;
  if (name === '--help' || name === '-h' || name === 'help') {
    await write(io.stdout, mainHelp(commands));
    return EXIT_OK;
  }
  const command = commands.find((c) => c.name === name);
  if (command === undefined) {
    const why = name === undefined ? 'no command given' : `unknown command ${JSON.stringify(name)}`;
    await write(io.stderr, `runlog: ${why}\n${mainHelp(commands)}`);
    return EXIT_USAGE;
  }
  if ('raw' in command) return failureCode(io, () => command.raw(rest, io), `runlog ${command.name} --help`);
  return failureCode(io, () => runParsed(command, rest, io), usageLine(command));
}

async function runParsed(command: Command, argv: readonly string[], io: CliIo): Promise<number> {
  const options = { ...command.options, help: { type: 'boolean', short: 'h' } } as const;
  const { values, positionals } = parseArgs({ args: negativeValuesJoined(argv, options), options, allowPositionals: true, strict: true });
  if (values.help === true) {
    await write(io.stdout, commandHelp(command));
    return EXIT_OK;
  }
  const { min, max } = command.positionals;
  if (positionals.length < min) throw new UsageError(`${command.name} needs ${command.usage}`);
  if (positionals.length > max) throw new UsageError(`unexpected argument ${JSON.stringify(positionals[max])}`);
  return command.run({ values, positionals, io });
}

/**
 * `--name -5` as `--name=-5` for an option that takes a value: parseArgs reads a word starting
 * with a dash as an option and refuses the pair as "ambiguous", where the option's own check
 * names the value and what it must be (`--limit must be an integer >= 1, got "-1"`).
 */
function negativeValuesJoined(argv: readonly string[], options: Readonly<Record<string, { type: string }>>): string[] {
  const joined: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const word = argv[i]!;
    const next = argv[i + 1];
    const takesValue = word.startsWith('--') && !word.includes('=') && options[word.slice(2)]?.type === 'string';
    if (takesValue && next !== undefined && /^-\d/.test(next)) {
      joined.push(`${word}=${next}`);
      i++;
    } else joined.push(word);
  }
  return joined;
}

/** Runs `body`; a throw becomes a message on stderr and its exit code. */
async function failureCode(io: CliIo, body: () => Promise<number>, usage: string): Promise<number> {
  try {
    return await body();
  } catch (error) {
    // The reader of our output stopped reading (`runlog export --json | head -1`): the command ends quietly, as `cat` would.
    if (isBrokenPipe(error)) return EXIT_OK;
    if (error instanceof UsageError || isParseArgsError(error)) {
      await write(
        io.stderr,
        `runlog: ${(error as Error).message}\n${usage}\n(runlog --help lists the commands; <command> --help its options)\n`,
      );
      return EXIT_USAGE;
    }
    if (isRunlogError(error)) {
      await write(io.stderr, `runlog: ${error.code}: ${error.message}\n`);
      return error.code === 'InvalidArgument' ? EXIT_USAGE : EXIT_REFUSED;
    }
    await write(io.stderr, `runlog: ${error instanceof Error ? error.message : String(error)}\n`);
    return EXIT_REFUSED;
  }
}

function isBrokenPipe(error: unknown): boolean {
  return error instanceof Error && (error as NodeJS.ErrnoException).code === 'EPIPE';
}

function isParseArgsError(error: unknown): boolean {
  return error instanceof TypeError && 'code' in error && String(error.code).startsWith('ERR_PARSE_ARGS');
}
