/**
 * The worker runtime: handlers per agent, a pool of runs over the queue, periodic work,
 * ensureFresh, runDue and waitIdle. See run-entry.ts for one run's life, supervise.ts and
 * lease-keeper.ts for leases and stopping, run-loop.ts for the pool.
 */
import { setMaxListeners } from 'node:events';
import {
  describe,
  optionalOptions,
  optionalSignal,
  requireFunction,
  requireName,
  requireSignal,
  requireTimerMs,
} from '../validation/index.ts';
import { RunlogError, invalidArgument } from '../errors.ts';
import type { Entry, RunQueueApi } from '../queue/types.ts';
import { Closer } from './closer.ts';
import { ensureFresh } from './ensure-fresh.ts';
import { resolveOptions, type ResolvedOptions } from './options.ts';
import { Periodic } from './periodic.ts';
import { runDue } from './run-due.ts';
import type { RunContext } from './run-entry.ts';
import { Pool } from './run-loop.ts';
import type { Handler, WorkerMetricsSnapshot, WorkerOptions } from './types.ts';
import { Waker } from './waker.ts';
import { WorkerReporter } from './report.ts';
import { WorkerMetrics } from './worker-metrics.ts';

const NEVER = new AbortController().signal;

export class Worker {
  readonly holder: string;
  private readonly options: ResolvedOptions;
  private readonly reporter: WorkerReporter;
  private readonly handlers = new Map<string, Handler>();
  private readonly everyMs = new Map<string, number>();
  private readonly counters = new WorkerMetrics();
  private readonly waker: Waker;
  private readonly ctx: RunContext;
  private readonly periodic: Periodic;
  private readonly idleWaiters = new Set<() => void>();
  private pool: Pool | null = null;
  private running = false;
  private stopping: AbortSignal = NEVER;
  /** Runs made by runDue and ensureFresh (the pool counts its own). */
  private outsideRuns = 0;

  constructor(
    private readonly queue: RunQueueApi,
    options: WorkerOptions = {},
  ) {
    if (!isQueue(queue)) throw invalidArgument(`queue must be a RunQueue, got ${describe(queue)}`);
    const resolved = resolveOptions(options);
    this.holder = resolved.holder;
    this.reporter = new WorkerReporter(this.holder, resolved.logger, () => queue.now());
    // Every event goes to onEvent, and what a person must see also to the logger.
    this.options = {
      ...resolved,
      onEvent: (event) => {
        resolved.onEvent(event);
        this.reporter.event(event);
      },
    };
    this.waker = new Waker(this.options.timers);
    const closer = new Closer(queue);
    this.ctx = {
      queue,
      close: (lease, request) => closer.close(lease, request),
      options: this.options,
      metrics: this.counters,
      handlerOf: (agent) => this.handlers.get(agent)!,
      afterClose: (entry) => this.afterClose(entry),
    };
    this.periodic = new Periodic(this.ctx, this.everyMs, (agent, signal) => this.runDueWith(agent, signal));
  }

  /** Registers the handler of `agent`. Before run; one per agent. */
  handle(agent: string, handler: Handler): void {
    requireName('agent', agent);
    requireFunction('handler', handler);
    if (this.running) throw invalidArgument(`register handlers before run: agent ${describe(agent)} came too late`);
    if (this.handlers.has(agent)) throw invalidArgument(`agent ${describe(agent)} already has a handler`);
    this.handlers.set(agent, handler);
  }

  /** Registers periodic work: its entries run every everyMs on a timer, not as soon as due. */
  handleEvery(agent: string, everyMs: number, handler: Handler): void {
    requireTimerMs('everyMs', everyMs, 1);
    const { tenants, periodicTenant } = this.options;
    if (tenants !== undefined && !tenants.includes(periodicTenant)) {
      throw invalidArgument(
        `periodic work is submitted under periodicTenant ${describe(periodicTenant)}, which this worker's tenants ${describe(tenants)} leave out`,
      );
    }
    this.handle(agent, handler);
    this.everyMs.set(agent, everyMs);
  }

  /** Runs the pool and periodic timers until `signal` aborts; resolves once every run has settled. */
  async run(outer: AbortSignal): Promise<void> {
    requireSignal('run signal', outer);
    if (this.running) throw invalidArgument('this worker is running already');
    if (this.handlers.size === 0) throw invalidArgument('register a handler (handle or handleEvery) before run');
    // Every slot and run listens on the stop signal: an internal one, so the caller's keeps its listener limit.
    const stopping = new AbortController();
    setMaxListeners(0, stopping.signal);
    const forward = (): void => stopping.abort(outer.reason);
    if (outer.aborted) forward();
    else outer.addEventListener('abort', forward, { once: true });
    const signal = stopping.signal;
    this.running = true;
    this.stopping = signal;
    const pool = new Pool(this.ctx, this.poolAgents(), this.holder, this.waker, () => this.checkIdle());
    this.pool = pool;
    const unlisten = this.queue.onWork(() => this.waker.notifyOne());
    const unstop = () => this.waker.notifyAll();
    signal.addEventListener('abort', unstop, { once: true });
    try {
      await Promise.all([pool.run(signal), this.periodic.run(signal)]);
    } finally {
      unlisten();
      outer.removeEventListener('abort', forward);
      signal.removeEventListener('abort', unstop);
      this.pool = null;
      this.running = false;
      this.stopping = NEVER;
      this.reporter.flush();
      this.checkIdle();
    }
  }

  /** Runs every due entry of `agent` now, one after another; answers how many runs it made. */
  async runDue(agent: string): Promise<number> {
    this.requireHandler(agent);
    return this.runDueWith(agent, this.stopping);
  }

  /** Runs the pending entry of `agent` on the thread now, or waits for its run elsewhere. See ensure-fresh.ts. */
  async ensureFresh(tenant: string, thread: string, agent: string, options: { signal?: AbortSignal } = {}): Promise<undefined> {
    requireName('tenant', tenant);
    requireName('thread', thread);
    this.requireHandler(agent);
    const tenants = this.options.tenants;
    if (tenants !== undefined && !tenants.includes(tenant)) {
      throw invalidArgument(`tenant ${describe(tenant)} is not one of this worker's tenants ${describe(tenants)}`);
    }
    const signal = optionalSignal('signal', optionalOptions('ensureFresh options', options, ['signal']).signal);
    return this.track(() => ensureFresh(this.ctx, this.holder, tenant, thread, agent, signal));
  }

  /**
   * Resolves once no entry of a pool agent (of the worker's tenants) is pending or leased and no run is in progress
   * (parked entries and periodic entries waiting for their timer do not count). For tests;
   * needs run() running when pool agents exist, as nothing else takes their entries.
   */
  waitIdle(given?: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      const signal = optionalSignal('waitIdle signal', given);
      // Idleness asks the queue (nextDueAt), which may be remote: a check that resolves after
      // the waiter finished is harmless (finishing twice settles the promise once).
      const check = (): void => {
        if (signal?.aborted) return finish(signal.reason);
        this.isIdle().then((idle) => idle && finish(), finish);
      };
      const finish = (error?: unknown): void => {
        this.idleWaiters.delete(check);
        signal?.removeEventListener('abort', check);
        if (error === undefined) resolve();
        else reject(error);
      };
      if (!this.running && this.poolAgents().length > 0)
        return reject(invalidArgument('waitIdle needs run() running: nothing else takes pending entries'));
      // Every slot takes once more: idle needs a take made after this call that found nothing.
      // In process the queue's onWork already woke the slots for what was submitted before; over
      // HTTP that signal may still be on its way, and the pool would look quiet with work pending.
      this.waker.notifyAll();
      this.idleWaiters.add(check);
      signal?.addEventListener('abort', check, { once: true });
      check();
    });
  }

  /** Idle runs ask the queue again now (tests call it after moving the fake store clock). */
  wake(): void {
    this.waker.notifyAll();
  }

  metrics(): WorkerMetricsSnapshot {
    return this.counters.snapshot();
  }

  private async runDueWith(agent: string, signal: AbortSignal): Promise<number> {
    return this.track(() => runDue(this.ctx, agent, this.holder, signal));
  }

  private async track<T>(action: () => Promise<T>): Promise<T> {
    this.outsideRuns++;
    try {
      return await action();
    } finally {
      this.outsideRuns--;
      this.checkIdle();
    }
  }

  private afterClose(entry: Entry): Promise<string | null> | null {
    return this.periodic.isPeriodicEntry(entry) ? this.nextPeriodic(entry) : null;
  }

  private async nextPeriodic(entry: Entry): Promise<string | null> {
    try {
      return await this.periodic.next(entry);
    } catch (error) {
      this.options.onEvent({ type: 'error', error, context: `submitting the next periodic entry after ${entry.entryId}` });
      return null;
    }
  }

  private async isIdle(): Promise<boolean> {
    if (this.outsideRuns > 0) return false;
    const agents = this.poolAgents();
    if (agents.length === 0) return true;
    return this.pool !== null && this.pool.quiet() && (await this.queue.nextDueAt(agents, this.options.tenants)) === null;
  }

  private checkIdle(): void {
    for (const check of [...this.idleWaiters]) check();
  }

  private poolAgents(): string[] {
    return [...this.handlers.keys()].filter((agent) => !this.everyMs.has(agent));
  }

  private requireHandler(agent: string): void {
    requireName('agent', agent);
    if (!this.handlers.has(agent)) throw new RunlogError('InvalidArgument', `agent ${describe(agent)} has no handler`);
  }
}

function isQueue(queue: unknown): queue is RunQueueApi {
  try {
    return typeof (queue as RunQueueApi | undefined)?.take === 'function';
  } catch {
    return false;
  }
}
