/**
 * `runlog serve` nodes in child processes, for the cluster soak and the cluster bench: each
 * `node --import tsx src/cli/runlog.ts serve --brokers … --topic … --partitions N --port P`
 * (plus `--group G --advertise-url http://127.0.0.1:P` in cluster mode), with none of this
 * process's RUNLOG_* variables. Each node keeps the port chosen for it at the start, so a
 * node killed and started again answers at the same url (its clients reconnect there).
 *
 * Its JSON log lines (stdout) are parsed as they come: start() resolves once the node logs
 * `serve.listening` (the queue opened, every partition it serves claimed and replayed) and
 * rejects with the tail of its stderr if it exits first. Every record is kept per run, so a
 * caller can read the cluster's own lines (`cluster.partition.serving` { unservedMs }).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));
const STOP_GRACE_MS = 15_000;

export interface NodeSpec {
  brokers: readonly string[];
  topic: string;
  partitions: number;
  /** The consumer group of cluster mode (`--group`); absent: a single node that owns every partition. */
  group?: string;
  /** Extra `runlog serve` flags (e.g. `--log-level warn`). */
  extraArgs?: readonly string[];
}

export type LogLine = Record<string, unknown>;

export class ServeNode {
  readonly url: string;
  /** The log lines of every run of this node, oldest first. */
  readonly lines: LogLine[] = [];
  #child: ChildProcess | null = null;
  #exited: Promise<unknown> = Promise.resolve();
  #stderr = '';
  starts = 0;
  kills = 0;
  /** Exits this process did not ask for (a crash), with the tail of stderr. */
  readonly crashes: string[] = [];
  #stopping = false;

  constructor(
    readonly name: string,
    readonly port: number,
    private readonly spec: NodeSpec,
  ) {
    this.url = `http://127.0.0.1:${port}`;
  }

  get running(): boolean {
    return this.#child !== null && this.#child.exitCode === null && this.#child.signalCode === null;
  }

  /** Starts the node; resolves once it listens, rejects if it exits before. */
  async start(): Promise<void> {
    if (this.running) throw new Error(`${this.name} is already running`);
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/runlog.ts', 'serve', ...this.#args()], {
      cwd: root,
      env: Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('RUNLOG_'))),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.#child = child;
    this.#stderr = '';
    this.#stopping = false;
    this.starts++;
    this.#exited = once(child, 'close');
    void this.#exited.then(() => {
      if (!this.#stopping)
        this.crashes.push(`${this.name} exited (${child.exitCode ?? child.signalCode}): ${this.#stderr.trim().slice(-1_000)}`);
    });
    const listening = this.#readLines(child);
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (this.#stderr = (this.#stderr + chunk).slice(-4_000)));
    const exit = this.#exited.then(() => {
      throw new Error(`${this.name} exited (${child.exitCode ?? child.signalCode}) before listening: ${this.#stderr.trim()}`);
    });
    await Promise.race([listening, exit]);
    exit.catch(() => undefined);
  }

  /** SIGKILL: no shutdown at all, as a machine that dies. */
  async kill(): Promise<void> {
    if (!this.running) return;
    this.kills++;
    this.#stopping = true;
    this.#child!.kill('SIGKILL');
    await this.#exited;
  }

  /** SIGTERM (a graceful stop), SIGKILL if it is not done within STOP_GRACE_MS. */
  async stop(): Promise<void> {
    if (!this.running) return;
    const child = this.#child!;
    this.#stopping = true;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
    await this.#exited;
    clearTimeout(timer);
  }

  stderr(): string {
    return this.#stderr;
  }

  #args(): string[] {
    const { spec } = this;
    const args = ['--brokers', spec.brokers.join(','), '--topic', spec.topic, '--partitions', String(spec.partitions)];
    args.push('--host', '127.0.0.1', '--port', String(this.port));
    if (spec.group !== undefined) args.push('--group', spec.group, '--advertise-url', this.url);
    return [...args, ...(spec.extraArgs ?? [])];
  }

  /** Parses stdout's JSON lines into `lines`; resolves at the first serve.listening of this run. */
  #readLines(child: ChildProcess): Promise<void> {
    return new Promise((resolve) => {
      let partial = '';
      child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
        const lines = (partial + chunk).split('\n');
        partial = lines.pop()!;
        for (const text of lines) {
          if (!text.startsWith('{')) continue;
          const line = JSON.parse(text) as LogLine;
          this.lines.push({ ...line, node: this.name });
          if (line.event === 'serve.listening') resolve();
        }
      });
    });
  }
}

/**
 * A port free now on loopback, which the node binds a moment later and again at each restart.
 * Not one the OS picks (port 0): those come from its ephemeral range, from which every outgoing
 * connection (a Kafka client's, another test's) takes its local port too, and one took a node's
 * port between this check and the node's bind (EADDRINUSE in a CI run, 2026-12-07). Ports below
 * that range are only ever taken by a listen; this tries random ones there until one binds.
 */
export async function freePort(): Promise<number> {
  const below = await ephemeralLow();
  for (let tries = 0; tries < 100; tries++) {
    const port = PORTS_FROM + Math.floor(Math.random() * (below - PORTS_FROM));
    if (await bindable(port)) return port;
  }
  throw new Error(`no free port found in [${PORTS_FROM}, ${below})`);
}

/** The lowest port of the range freePort picks from. */
const PORTS_FROM = 10_000;

/** The first port of the OS's ephemeral range (Linux's default when it cannot be read). */
async function ephemeralLow(): Promise<number> {
  try {
    const low = Number((await readFile('/proc/sys/net/ipv4/ip_local_port_range', 'utf8')).trim().split(/\s+/)[0]);
    return Number.isInteger(low) && low > PORTS_FROM + 1_000 ? low : LINUX_EPHEMERAL_LOW;
  } catch {
    return LINUX_EPHEMERAL_LOW;
  }
}

const LINUX_EPHEMERAL_LOW = 32_768;

/** Whether `port` can be listened on at 127.0.0.1 now. */
async function bindable(port: number): Promise<boolean> {
  const server = createServer();
  const bound = await new Promise<boolean>((resolve) => {
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => resolve(true));
  });
  if (bound) {
    server.close();
    await once(server, 'close');
  }
  return bound;
}

/** `count` nodes on ports of their own, started in parallel. */
export async function startNodes(count: number, spec: NodeSpec): Promise<ServeNode[]> {
  const nodes: ServeNode[] = [];
  for (let i = 0; i < count; i++) nodes.push(new ServeNode(`node-${i + 1}`, await freePort(), spec));
  try {
    await Promise.all(nodes.map((node) => node.start()));
  } catch (error) {
    await Promise.all(nodes.map((node) => node.kill()));
    throw error;
  }
  return nodes;
}

/** Whether this checkout's `runlog serve` has cluster mode (`--group`); without it only a single node can serve a topic. */
export async function serveHasGroups(): Promise<boolean> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/runlog.ts', 'serve', '--help'], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  let usage = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (usage += chunk));
  await once(child, 'close');
  return usage.includes('--group');
}
