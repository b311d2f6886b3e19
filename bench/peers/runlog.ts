/** runlog: a RunQueue on the embedded file log (fsync on) in a fresh directory, and its Worker. */
import { mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { openRunQueue } from '../../src/queue/open-run-queue.ts';
import type { RunQueue } from '../../src/queue/run-queue.ts';
import { Worker } from '../../src/worker/worker.ts';
import type { PeerQueue, PeerSystem } from './system.ts';

const TENANT = 'peers';
const AGENT = 'noop';

export function runlogSystem(root: string): PeerSystem {
  return {
    name: 'runlog Worker, file log, fsync on',
    async open() {
      const dir = await mkdtemp(join(root, 'runlog-'));
      return new RunlogQueue(dir, await openRunQueue({ log: { kind: 'file', dir, fsync: true } }));
    },
  };
}

class RunlogQueue implements PeerQueue {
  private readonly stopWorker = new AbortController();
  private running: Promise<void> = Promise.resolve();

  constructor(
    private readonly dir: string,
    private readonly queue: RunQueue,
  ) {}

  async add(n: number): Promise<void> {
    await this.submit(n);
  }

  async startWorker(concurrency: number, completed: () => void): Promise<void> {
    const worker = new Worker(this.queue, { concurrency, onEvent: (event) => event.type === 'succeeded' && completed() });
    worker.handle(AGENT, () => undefined);
    this.running = worker.run(this.stopWorker.signal);
  }

  async addAndWait(n: number): Promise<void> {
    const { entryId } = await this.submit(n);
    await this.queue.awaitClosed(TENANT, entryId);
  }

  async close(): Promise<void> {
    this.stopWorker.abort();
    await this.running;
    await this.queue.stop();
    await rm(this.dir, { recursive: true, force: true });
  }

  /** Each job on a thread of its own, as the peers' jobs are independent of each other. */
  private submit(n: number): ReturnType<RunQueue['submit']> {
    return this.queue.submit({ tenant: TENANT, thread: `job-${n}`, agent: AGENT, input: Buffer.from(`{"n":${n}}`) });
  }
}
