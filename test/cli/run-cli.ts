/**
 * Runs the command line in this process (the same dispatcher and command table as the
 * `runlog` binary) with its output captured: for the many-case tables, where a child
 * process per case would cost seconds each. Tests of the process itself (signals, exit
 * status, a live writer elsewhere) spawn src/cli/runlog.ts instead (runlogChild).
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import { COMMANDS } from '../../src/cli/commands/index.ts';
import { dispatch } from '../../src/cli/dispatch.ts';

export const CLI = join(import.meta.dirname, '../../src/cli/runlog.ts');

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

function collector(): { stream: Writable; text: () => string } {
  const chunks: Buffer[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(Buffer.from(chunk));
      done();
    },
  });
  return { stream, text: () => Buffer.concat(chunks).toString('utf8') };
}

export interface InProcessOptions {
  stdin?: string;
  env?: Record<string, string | undefined>;
  signal?: AbortSignal;
  /** stderr says it is a terminal (isTTY), as a terminal's stream does: what a person sees (export's progress bar). */
  stderrIsTerminal?: boolean;
}

/** `runlog ...args` in this process. */
export async function runCli(args: readonly string[], options: InProcessOptions = {}): Promise<CliRun> {
  const stdout = collector();
  const stderr = collector();
  if (options.stderrIsTerminal === true) Object.assign(stderr.stream, { isTTY: true });
  const code = await dispatch(COMMANDS, args, {
    stdout: stdout.stream,
    stderr: stderr.stream,
    stdin: Readable.from(options.stdin === undefined ? [] : [Buffer.from(options.stdin)]),
    env: options.env ?? {},
    signal: options.signal ?? new AbortController().signal,
  });
  return { code, stdout: stdout.text(), stderr: stderr.text() };
}

/** `runlog ...args` as a child process (without blocking this process's event loop). */
export async function runlogChild(args: readonly string[], options: { stdin?: string; env?: NodeJS.ProcessEnv } = {}): Promise<CliRun> {
  const child = spawn(process.execPath, ['--import', 'tsx', CLI, ...args], {
    stdio: ['pipe', 'pipe', 'pipe'],
    env: options.env ?? process.env,
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  child.stdin.end(options.stdin ?? '');
  const [code] = (await once(child, 'exit')) as [number | null];
  return { code, stdout, stderr };
}
