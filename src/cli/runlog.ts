#!/usr/bin/env node
/**
 * runlog's command line: `runlog <command> [options]`, `runlog --help` for the commands,
 * `runlog <command> --help` for one. The commands are in commands/ (index.ts is the
 * table); dispatch.ts parses, runs and turns failures into exit codes (0 ok, 1 refused,
 * 2 usage). SIGINT/SIGTERM abort the signal the commands that stop on one watch (tail,
 * export: command.ts stopsOnSignal), and a second one exits at once; any other command exits
 * at the first (130). Before, the first was lost on them: an export or a verify ran on to its end.
 */
import { COMMANDS } from './commands/index.ts';
import { dispatch } from './dispatch.ts';

const argv = process.argv.slice(2);
const stop = new AbortController();
const command = COMMANDS.find(({ name }) => name === argv[0]);
// A command that parses its own arguments (serve) handles the signals itself.
const raw = command !== undefined && 'raw' in command;
const stopsItself = command !== undefined && 'stopsOnSignal' in command && command.stopsOnSignal === true;
for (const signal of raw ? [] : (['SIGINT', 'SIGTERM'] as const)) {
  process.once(signal, () => {
    if (!stopsItself) process.exit(130);
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
