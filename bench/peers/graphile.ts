/**
 * Graphile Worker on a PostgreSQL cluster of its own (postgres-server.ts). Producers add through
 * WorkerUtils over a pool of 10 connections (Graphile Worker's default; 64, one per producer,
 * added slower here); the runner gets concurrency + 2 connections, as Graphile Worker advises. Graphile Worker deletes a job when it completes,
 * so every measurement starts on empty tables. It has no call that waits for a job's
 * completion: the drain counts, and addAndWait waits for, the runner's `job:success` event in
 * this process, which it emits when the task returns, before the job's completion is written
 * (generous to it: the other systems count a completion once it is stored).
 */
import { EventEmitter } from 'node:events';
import { Logger, makeWorkerUtils, run, type Runner, type WorkerEvents, type WorkerUtils } from 'graphile-worker';
import pg from 'pg';
import type { Postgres } from './postgres-server.ts';
import type { PeerQueue, PeerSystem } from './system.ts';

/** Warnings and errors only: Graphile Worker logs a line per job at info. */
const logger = new Logger(() => (level, message) => {
  if (level === 'error' || level === 'warning') console.error(`graphile-worker ${level}: ${message}`);
});

/** WorkerUtils' pool: Graphile Worker's default maxPoolSize. */
const PRODUCER_CONNECTIONS = 10;

export function graphileSystem(postgres: Postgres): PeerSystem {
  return {
    name: 'Graphile Worker, PostgreSQL',
    async open() {
      const pool = (max: number): pg.Pool =>
        new pg.Pool({ host: postgres.host, user: postgres.user, database: 'postgres', max })
          .on('error', (error) => console.error('pg pool:', error))
          .on('connect', (client) => client.on('error', (error) => console.error('pg client:', error)));
      const utilsPool = pool(PRODUCER_CONNECTIONS);
      const utils = await makeWorkerUtils({ pgPool: utilsPool, logger });
      await utils.migrate();
      return new GraphileQueue(utils, utilsPool, pool);
    },
  };
}

class GraphileQueue implements PeerQueue {
  private runner: Runner | null = null;
  private runnerPool: pg.Pool | null = null;
  /** Jobs a caller waits for, and jobs completed before their caller asked. */
  private readonly waiting = new Map<string, () => void>();
  private readonly completedEarly = new Set<string>();

  constructor(
    private readonly utils: WorkerUtils,
    private readonly utilsPool: pg.Pool,
    private readonly pool: (max: number) => pg.Pool,
  ) {}

  async add(n: number): Promise<void> {
    await this.utils.addJob('noop', { n });
  }

  async startWorker(concurrency: number, completed: () => void): Promise<void> {
    const events: WorkerEvents = new EventEmitter();
    events.on('job:success', ({ job }) => {
      completed();
      this.settle(job.id);
    });
    this.runnerPool = this.pool(concurrency + 2);
    this.runner = await run({
      pgPool: this.runnerPool,
      concurrency,
      noHandleSignals: true,
      logger,
      events,
      taskList: { noop: async () => {} },
    });
  }

  async addAndWait(n: number): Promise<void> {
    const job = await this.utils.addJob('noop', { n });
    if (this.completedEarly.delete(job.id)) return;
    await new Promise<void>((resolve) => this.waiting.set(job.id, resolve));
  }

  async close(): Promise<void> {
    await this.runner?.stop();
    await this.runnerPool?.end();
    await this.utils.release();
    await this.utilsPool.end();
  }

  private settle(id: string): void {
    const resolve = this.waiting.get(id);
    if (resolve === undefined) this.completedEarly.add(id);
    else {
      this.waiting.delete(id);
      resolve();
    }
  }
}
