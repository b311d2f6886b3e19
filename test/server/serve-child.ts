/**
 * A real `runlog serve` child process for tests: `node --import tsx src/cli/runlog.ts serve
 * ...args` with none of the caller's RUNLOG_* variables, its JSON log lines read from
 * stdout as they come (other lines kept as text); started() waits for `serve.listening` and answers the url and port
 * it names (tests ask for port 0). Stopped (SIGKILL) after the test if still running.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { onCleanup, type AfterHooks } from '../support/cleanup.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));

export interface ServeChild {
  readonly child: ChildProcess;
  /** The JSON log lines so far, parsed. */
  readonly records: Record<string, unknown>[];
  /** stdout lines that are not JSON (the usage text). */
  readonly text: string[];
  /** stderr so far. */
  stderr(): string;
  /** Resolves the serve.listening record's url and port; rejects if the child exits first. */
  started(): Promise<{ url: string; port: number }>;
  /** The exit code and signal, once exited. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export function spawnServe(t: AfterHooks, args: readonly string[], env: Record<string, string> = {}): ServeChild {
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('RUNLOG_')));
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/runlog.ts', 'serve', ...args], {
    cwd: root,
    env: { ...inherited, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const records: Record<string, unknown>[] = [];
  const text: string[] = [];
  let stderr = '';
  let partial = '';
  const waiting = new Set<() => void>();
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    const lines = (partial + chunk).split('\n');
    partial = lines.pop()!;
    for (const line of lines) {
      if (line.startsWith('{')) records.push(JSON.parse(line) as Record<string, unknown>);
      else text.push(line);
    }
    for (const wake of waiting) wake();
  });
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('close', (code, signal) => {
      resolve({ code, signal });
      for (const wake of waiting) wake();
    }),
  );
  onCleanup(t, async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  });
  const started = () =>
    new Promise<{ url: string; port: number }>((resolve, reject) => {
      const check = () => {
        const listening = records.find((record) => record.event === 'serve.listening');
        if (listening !== undefined) {
          waiting.delete(check);
          resolve({ url: String(listening.url), port: Number(listening.port) });
        } else if (child.exitCode !== null || child.signalCode !== null) {
          waiting.delete(check);
          reject(new Error(`runlog serve exited (${child.exitCode ?? child.signalCode}) before listening: ${stderr}`));
        }
      };
      waiting.add(check);
      check();
    });
  return { child, records, text, stderr: () => stderr, started, exited };
}
