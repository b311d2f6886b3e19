/**
 * The remote Worker of the bench's submit-to-start run (remote.ts), in a process of its own:
 * `new Worker(await connect({ url }))` with a handler that notes when it started each entry
 * (input "n"), as epoch ms (performance.timeOrigin + performance.now()). Driven over IPC:
 * it says `ready` once running; `drain` waits until it started `expected` entries (at most
 * 30 s more) and says `drained`; `stop` stops the worker and sends the `report`.
 */
import { connect } from '../src/client/index.ts';
import { Worker } from '../src/worker/worker.ts';
import { AGENT } from './throughput.ts';

export type WorkerCommand = { type: 'drain'; expected: number } | { type: 'stop' };
export interface StartReport {
  type: 'report';
  /** [n, started at] per entry the handler started. */
  starts: [number, number][];
}

const DRAIN_LIMIT_MS = 30_000;

async function main(): Promise<void> {
  const [url, concurrency] = process.argv.slice(2);
  const queue = await connect({ url: url! });
  const starts: [number, number][] = [];
  const worker = new Worker(queue, { concurrency: Number(concurrency), logger: () => {} });
  worker.handle(AGENT, ({ input }) => {
    starts.push([Number(Buffer.from(input).toString('utf8')), performance.timeOrigin + performance.now()]);
  });
  const stop = new AbortController();
  const running = worker.run(stop.signal);
  process.on('message', (command: WorkerCommand) => {
    if (command.type === 'drain') void drain(starts, command.expected).then(() => process.send!({ type: 'drained' }));
    else
      void (async () => {
        stop.abort();
        await running;
        await queue.stop();
        process.send!({ type: 'report', starts } satisfies StartReport, () => process.exit(0));
      })();
  });
  // The bench gone (killed, crashed): nothing is left to report to, and nothing may outlive it.
  process.on('disconnect', () => process.exit(1));
  process.send!({ type: 'ready' });
}

async function drain(starts: readonly unknown[], expected: number): Promise<void> {
  const until = performance.now() + DRAIN_LIMIT_MS;
  while (starts.length < expected && performance.now() < until) await new Promise((resolve) => setTimeout(resolve, 20));
}

await main();
