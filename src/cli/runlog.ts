#!/usr/bin/env node
/**
 * runlog's command line: `runlog <command> [options]`, `runlog --help` for the commands,
 * `runlog <command> --help` for one. The commands are in commands/ (index.ts is the
 * table); dispatch.ts parses, runs and turns failures into exit codes (0 ok, 1 refused,
 * 2 usage). SIGINT/SIGTERM abort the signal following commands (tail) watch; a second one
 * exits at once.
 */
import { COMMANDS } from './commands/index.ts';
import { dispatch } from './dispatch.ts';

const argv = process.argv.slice(2);
const stop = new AbortController();
// A command that parses its own arguments (serve) handles the signals itself.
const raw = COMMANDS.some((command) => command.name === argv[0] && 'raw' in command);
for (const signal of raw ? [] : (['SIGINT', 'SIGTERM'] as const)) {
  process.once(signal, () => {
    stop.abort();
    process.once(signal, () => process.exit(130));
  });
}

// A reader that stops reading (`runlog tail | head -1`) fails the next write with EPIPE, and the command
// ends quietly (dispatch.ts). Between two writes the error comes as an event: heard here, not thrown.
if (!raw) process.stdout.on('error', (error: NodeJS.ErrnoException) => error.code === 'EPIPE' && stop.abort());

process.exitCode = await dispatch(COMMANDS, argv, {
  stdout: process.stdout,
  stderr: process.stderr,
  stdin: process.stdin,
  env: process.env,
  signal: stop.signal,
});
