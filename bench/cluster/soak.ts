/**
 * The cluster soak, one run: `nodes` runlog serve child processes on one Kafka topic (in
 * cluster mode, `--group`, when there is more than one), Workers in child processes connected
 * through the client, this process submitting entries over `threads` threads through the
 * client, and a chaos loop that SIGKILLs a node and starts it again (same port) every
 * killEveryMs (0.5x-1.5x at random), the next kill only once the restarted node listens.
 *
 * It runs until every acknowledged entry is closed (followed on the events topic) or
 * deadlineMs passes; then stops the chaos, the Workers and the nodes, reads the events topic
 * whole and checks it (check.ts) against the acknowledgements and the handlers' records.
 * Used by bench/cluster-soak.ts and by test/cluster/soak.kafka.test.ts.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { connect } from '../../src/client/index.ts';
import { retry, sleep } from '../../src/retry.ts';
import { check, readEventsTopic, type SoakCounts } from './check.ts';
import { ClosedTracker } from './closed-tracker.ts';
import { startNodes, type ServeNode } from './nodes.ts';
import { settle } from './settle.ts';
import { submitAll, type Acknowledged, type SubmitResult } from './submitter.ts';
import type { ChildMessage, HandlerRun, WorkerChildOptions } from './worker-child.ts';

export interface SoakOptions {
  brokers: readonly string[];
  topic: string;
  partitions: number;
  nodes: number;
  /** The consumer group of cluster mode; required with more than one node. */
  group?: string;
  entries: number;
  threads: number;
  /** Submissions under way at once (of different threads). */
  inFlight: number;
  workerProcesses: number;
  workersPerProcess: number;
  concurrency: number;
  leaseMs: number;
  failureRate: number;
  /** Mean time between kills, ms; 0: no chaos. */
  killEveryMs: number;
  /** Stop killing after this many kills; the run then also waits for them all (a test's fixed dose of chaos). */
  maxKills?: number;
  /** Stop waiting for closes after this long, ms (the counts then show what was left). */
  deadlineMs: number;
  progress?: (message: string) => void;
}

export interface SoakReport {
  counts: SoakCounts;
  /** The first faults found, described. */
  examples: string[];
  /** Wall time from the first submission to the last close seen (or the deadline). */
  seconds: number;
  /** Closed entries per second of the store clock, first Submitted to last Closed. */
  lifecyclesPerSecond: number;
  kills: number;
  submit: Omit<SubmitResult, 'acknowledged'>;
  workers: Record<string, number>;
  workerErrors: string[];
  /** `cluster.partition.serving` unservedMs values the nodes logged (cluster mode). */
  unservedMs: number[];
}

const AGENT = 'soak';
/** How long a cluster may take to settle (a dead member leaves the group only after its session timeout). */
const SETTLE_MS = 120_000;
const TENANT = 'soak';

export async function runClusterSoak(options: SoakOptions): Promise<SoakReport> {
  if (options.nodes > 1 && options.group === undefined) throw new Error('more than one node needs a group (cluster mode)');
  const say = options.progress ?? (() => {});
  const spec = { brokers: options.brokers, topic: options.topic, partitions: options.partitions, extraArgs: ['--log-level', 'info'] };
  const nodes = await startNodes(options.nodes, options.group === undefined ? spec : { ...spec, group: options.group });
  const urls = nodes.map((node) => node.url);
  const settled = await settle(nodes, SETTLE_MS).catch(async (error: unknown) => {
    await Promise.all(nodes.map((node) => node.kill()));
    throw error;
  });
  say(`${nodes.length} node(s) serving, generation ${settled.generation}, partitions owned ${JSON.stringify(settled.owned)}`);
  const workers = new WorkerChildren();
  const chaos = new Chaos(nodes, options.killEveryMs, options.maxKills ?? Infinity, say);
  let tracker: ClosedTracker | undefined;
  try {
    await workers.start(options.workerProcesses, {
      urls,
      workers: options.workersPerProcess,
      concurrency: options.concurrency,
      leaseMs: options.leaseMs,
      failureRate: options.failureRate,
      agent: AGENT,
      maxWorkMs: 5,
    });
    tracker = await ClosedTracker.open(options.brokers, options.topic);
    const producer = await connect({ url: urls, retry: { forMs: 30_000 }, onWarning: () => {} });
    const started = performance.now();
    const giveUpAt = started + options.deadlineMs;
    chaos.start();
    const acknowledged: Acknowledged[] = [];
    let submitted: SubmitResult | undefined;
    const submitting = submitAll(producer, { tenant: TENANT, agent: AGENT, ...options, giveUpAt }, (ack) => acknowledged.push(ack)).then(
      (result) => (submitted = result),
    );
    const closedTracker = tracker;
    const allClosed = (): boolean => submitted !== undefined && acknowledged.every((ack) => closedTracker.closed.has(ack.entryId));
    await until(
      giveUpAt,
      () => allClosed() && chaos.done(),
      () => say(`acknowledged ${acknowledged.length}/${options.entries}, closed ${closedTracker.closed.size}, kills ${chaos.kills}`),
    );
    const seconds = (performance.now() - started) / 1000;
    await chaos.stop();
    await submitting;
    await producer.stop();
    const runs = await workers.stop();
    await Promise.all(nodes.map((node) => node.stop()));
    say('reading the events topic');
    const examples: string[] = [];
    const counts = check(await readEventsTopic(options.brokers, options.topic), submitted!.acknowledged, runs, examples);
    const { acknowledged: _, ...submit } = submitted!;
    return {
      counts,
      examples,
      seconds,
      lifecyclesPerSecond: counts.spanMs > 0 ? ((counts.succeeded + counts.parked) * 1000) / counts.spanMs : 0,
      kills: chaos.kills,
      submit,
      workers: workers.metrics,
      workerErrors: workers.errors,
      unservedMs: nodes.flatMap((node) =>
        node.lines.filter((l) => l.event === 'cluster.partition.serving').map((l) => Number(l.unservedMs)),
      ),
    };
  } finally {
    await chaos.stop().catch(() => undefined); // a failed restart was thrown above already
    await tracker?.stop();
    workers.kill();
    await Promise.all(nodes.map((node) => node.kill()));
  }
}

/** Waits until `done()` or `deadline` (performance.now()), saying how far it is every 5 s. */
async function until(deadline: number, done: () => boolean, report: () => void): Promise<void> {
  let reportAt = performance.now() + 5_000;
  while (!done() && performance.now() < deadline) {
    await sleep(100);
    if (performance.now() > reportAt) {
      report();
      reportAt += 5_000;
    }
  }
  report();
}

/** Kills a node (in turn) and starts it again, until stopped. */
class Chaos {
  kills = 0;
  #stopped = false;
  #restarting = false;
  #running: Promise<void> = Promise.resolve();
  #wake: () => void = () => {};

  constructor(
    private readonly nodes: readonly ServeNode[],
    private readonly everyMs: number,
    private readonly maxKills: number,
    private readonly say: (message: string) => void,
  ) {}

  start(): void {
    if (this.everyMs > 0) this.#running = this.#loop();
  }

  /** Whether the kills asked for are over (always, without maxKills). */
  done(): boolean {
    return this.everyMs === 0 || !Number.isFinite(this.maxKills) || (this.kills >= this.maxKills && !this.#restarting);
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.#wake();
    await this.#running;
  }

  async #loop(): Promise<void> {
    for (let turn = 0; ; turn++) {
      await new Promise<void>((resolve) => {
        this.#wake = resolve;
        setTimeout(resolve, this.everyMs * (0.5 + Math.random()));
      });
      if (this.#stopped || this.kills >= this.maxKills) return;
      const node = this.nodes[turn % this.nodes.length]!;
      this.#restarting = true;
      await node.kill();
      this.kills++;
      const downAt = performance.now();
      await this.#restart(node);
      const listeningMs = Math.round(performance.now() - downAt);
      const settled = await settle(this.nodes, SETTLE_MS);
      this.#restarting = false;
      this.say(
        `killed ${node.name} (SIGKILL), started it again: listening after ${listeningMs} ms, every partition served again after ${Math.round(performance.now() - downAt)} ms (generation ${settled.generation}, owned ${JSON.stringify(settled.owned)})`,
      );
    }
  }

  /** Starts the node again; a start that fails (its port taken meanwhile, the broker slow) is tried again, 5 tries in all. */
  #restart(node: ServeNode): Promise<void> {
    const retriable = (error: unknown): boolean => {
      this.say(`${node.name} did not start (${String(error).slice(0, 300)}); trying again`);
      return true;
    };
    return retry(() => node.start(), { firstMs: 1_000, maxMs: 5_000, tries: 5, retriable });
  }
}

/** The Worker child processes and what they report. */
class WorkerChildren {
  readonly runs: HandlerRun[] = [];
  readonly errors: string[] = [];
  readonly metrics: Record<string, number> = {};
  readonly #children: ChildProcess[] = [];

  async start(count: number, options: WorkerChildOptions): Promise<void> {
    const path = fileURLToPath(new URL('./worker-child.ts', import.meta.url));
    const ready: Promise<unknown>[] = [];
    for (let i = 0; i < count; i++) {
      const child = fork(path, [JSON.stringify(options)], {
        execArgv: ['--import', 'tsx'],
        stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      });
      this.#children.push(child);
      child.on('message', (message: ChildMessage) => this.#receive(message));
      ready.push(
        new Promise((resolve, reject) => {
          child.on('message', (message: ChildMessage) => message.type === 'ready' && resolve(undefined));
          child.on('exit', (code) => reject(new Error(`a soak worker exited (${code}) before it was ready`)));
        }),
      );
    }
    await Promise.all(ready);
  }

  #receive(message: ChildMessage): void {
    if (message.type === 'runs') {
      this.runs.push(...message.runs);
      for (const error of message.errors) if (this.errors.length < 20) this.errors.push(error);
    } else if (message.type === 'stopped') {
      for (const [name, value] of Object.entries(message.metrics)) this.metrics[name] = (this.metrics[name] ?? 0) + value;
    }
  }

  /** Stops every Worker (runs cut short are handed back) and answers every run the handlers noted. */
  async stop(): Promise<HandlerRun[]> {
    await Promise.all(
      this.#children.map(async (child) => {
        if (child.exitCode !== null) return;
        const exited = once(child, 'exit');
        child.send({ type: 'stop' });
        await exited;
      }),
    );
    return this.runs;
  }

  kill(): void {
    for (const child of this.#children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
}
