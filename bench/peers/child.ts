/** A server process the bench runs (redis-server, postgres): started, waited for, stopped. */
import { execFile, spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { createWriteStream, readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import type { Scope } from './scope.ts';

const run = promisify(execFile);

/**
 * Starts `command` with its output in `logFile` and answers once `ready` answers true (polled,
 * 30 s at most); fails if it exits first. Stopped at `scope`'s close (registered at once, so a
 * Ctrl-C while it starts stops it too): `stopSignal`, then SIGKILL after 20 s.
 */
export async function startServer(
  command: string,
  args: readonly string[],
  options: SpawnOptions & { logFile: string; stopSignal: NodeJS.Signals },
  ready: () => Promise<boolean>,
  scope: Scope,
): Promise<void> {
  const log = createWriteStream(options.logFile);
  const child = spawn(command, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout?.pipe(log);
  child.stderr?.pipe(log);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  scope.defer(() => stopChild(child, exited, options.stopSignal));
  await waitReady(child, ready, command, options.logFile);
}

async function waitReady(child: ChildProcess, ready: () => Promise<boolean>, command: string, logFile: string): Promise<void> {
  const giveUpAt = Date.now() + 30_000;
  while (!(await ready())) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`${command} exited early:\n${tail(logFile)}`);
    if (Date.now() > giveUpAt) throw new Error(`${command} not ready after 30 s:\n${tail(logFile)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The log's last lines (its directory is removed at the end). */
function tail(logFile: string): string {
  return readFileSync(logFile, 'utf8').split('\n').slice(-15).join('\n');
}

async function stopChild(child: ChildProcess, exited: Promise<void>, signal: NodeJS.Signals): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill(signal);
  const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
  await exited;
  clearTimeout(timer);
}

/** True when `command args` exits 0 (and, if given, prints `expect`). */
export async function succeeds(command: string, args: readonly string[], expect?: string): Promise<boolean> {
  try {
    const { stdout } = await run(command, args);
    return expect === undefined || stdout.includes(expect);
  } catch {
    return false;
  }
}
