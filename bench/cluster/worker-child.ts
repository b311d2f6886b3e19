/**
 * A soak Worker process (forked by soak.ts): `workers` Workers, each over a client of its own
 * (`connect` from src/client) to the nodes, serving the soak's agent. Its argument is the
 * JSON of WorkerChildOptions.
 *
 * The handler notes each run as it happens: [entryId, thread, attempt, startedAt, endedAt,
 * failed, pid], the times in epoch ms (performance.timeOrigin + performance.now(): the same clock
 * in every process of the machine), and fails `failureRate` of its runs (throws: the Worker
 * yields the entry to be retried after its backoff). Runs are sent to the parent over IPC in
 * batches; so are the Workers' error events (calls that failed while a node was down).
 *
 * IPC: it says `ready` once every Worker runs; `stop` stops them (entries of runs cut short
 * are handed back), then the clients, sends the last batch and `stopped` with the Workers'
 * metrics, and exits. The parent gone (killed, crashed), it exits at once.
 */
import { connect, Worker } from '../../src/index.ts';
import { sleep } from '../../src/retry.ts';
import type { WorkerEvent, WorkerLogRecord } from '../../src/worker/types.ts';

export interface WorkerChildOptions {
  urls: string[];
  workers: number;
  concurrency: number;
  leaseMs: number;
  failureRate: number;
  agent: string;
  /** How long a handler works, ms (uniform in [0, maxWorkMs]). */
  maxWorkMs: number;
}

/** One handler run: entry id, thread, attempt, started and ended (epoch ms), 1 if it threw, the worker process id. */
export type HandlerRun = [string, string, number, number, number, 0 | 1, number];

export type ChildMessage =
  { type: 'ready' } | { type: 'runs'; runs: HandlerRun[]; errors: string[] } | { type: 'stopped'; metrics: Record<string, number> };

const FLUSH_MS = 100;
const KEPT_ERRORS = 20;

const epochNow = (): number => performance.timeOrigin + performance.now();

async function main(): Promise<void> {
  const options = JSON.parse(process.argv[2]!) as WorkerChildOptions;
  let runs: HandlerRun[] = [];
  let errors: string[] = [];
  const counts: Record<string, number> = {};
  const onEvent = (event: WorkerEvent): void => {
    counts[event.type] = (counts[event.type] ?? 0) + 1;
    if (event.type === 'error' && errors.length < KEPT_ERRORS) errors.push(`${event.context}: ${String(event.error)}`);
  };
  const logger = (record: WorkerLogRecord): void => {
    counts[`log:${record.kind}`] = (counts[`log:${record.kind}`] ?? 0) + 1;
  };
  const flush = (): void => {
    if (runs.length === 0 && errors.length === 0) return;
    process.send!({ type: 'runs', runs, errors } satisfies ChildMessage);
    runs = [];
    errors = [];
  };
  const flusher = setInterval(flush, FLUSH_MS);

  const clients = await Promise.all(Array.from({ length: options.workers }, () => connect({ url: options.urls, onWarning: () => {} })));
  const stop = new AbortController();
  const running = clients.map((client, i) => {
    const worker = new Worker(client, {
      concurrency: options.concurrency,
      leaseMs: options.leaseMs,
      pollMs: 250,
      holder: `soak-${process.pid}-${i}`,
      backoff: (attempt) => 20 * attempt,
      onEvent,
      logger,
    });
    worker.handle(options.agent, async ({ entry, attempt }) => {
      const startedAt = epochNow();
      await sleep(Math.random() * options.maxWorkMs);
      const failed = Math.random() < options.failureRate;
      runs.push([entry.entryId, entry.thread, attempt, startedAt, epochNow(), failed ? 1 : 0, process.pid]);
      if (failed) throw new Error('soak: a planned failure');
      return 'ok';
    });
    return { worker, run: worker.run(stop.signal) };
  });

  process.on('disconnect', () => process.exit(1));
  process.on('message', (message: { type?: string }) => {
    if (message?.type !== 'stop') return;
    void (async () => {
      stop.abort();
      await Promise.all(running.map(({ run }) => run));
      await Promise.all(clients.map((client) => client.stop()));
      clearInterval(flusher);
      flush();
      for (const { worker } of running) {
        for (const [name, value] of Object.entries(worker.metrics())) {
          if (typeof value === 'number') counts[`metrics:${name}`] = (counts[`metrics:${name}`] ?? 0) + value;
        }
      }
      process.send!({ type: 'stopped', metrics: counts } satisfies ChildMessage, () => process.exit(0));
    })();
  });
  process.send!({ type: 'ready' } satisfies ChildMessage);
}

await main();
