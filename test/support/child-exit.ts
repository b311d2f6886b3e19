/**
 * Runs a TypeScript child process (node --import tsx) until it exits by itself, or kills it
 * after `limitMs`: a child kept alive by a connection nobody closed is the failure these tests
 * look for (its `signal` is then SIGKILL). Its stdout is collected; stderr is the test's.
 */
import { spawn } from 'node:child_process';

export interface ChildExit {
  code: number | null;
  signal: string | null;
  output: string;
}

export async function runChildUntilExit(script: string, args: readonly string[], limitMs: number): Promise<ChildExit> {
  const child = spawn(process.execPath, ['--import', 'tsx', script, ...args], { stdio: ['ignore', 'pipe', 'inherit'], env: process.env });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), limitMs);
  const [code, signal] = await new Promise<[number | null, string | null]>((resolve) => child.on('exit', (c, s) => resolve([c, s])));
  clearTimeout(timer);
  return { code, signal, output };
}
