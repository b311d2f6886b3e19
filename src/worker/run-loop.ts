/**
 * The pool: up to `concurrency` handlers at once, fed by one taking loop. A run holds its slot
 * while its handler runs; once the handler has settled, the slot is free for the next entry
 * while the run's outcome (its close, a retry) is still being made durable: a slot waiting on
 * a datasync would cap the pool at concurrency ÷ the append latency, whatever the handlers
 * cost. At most `concurrency` more runs may be recording their outcome at once (runs held in
 * all: at most twice the concurrency). While slots are free,
 * it asks the queue for as many entries as there are free slots in one takeStarted (each
 * leased and its attempt started, durable together) and starts a run of each; with every
 * slot busy it waits for a run to end. A take that finds fewer than it asked for means
 * nothing more is takeable now: the loop then waits idle without polling the queue hot, and
 * wakes on the first of: the queue's onWork (a submission, yield or close on this process),
 * the end of a run (it may have made work: the loop takes once more, as a slot that ran took
 * again), `wake()`, the store-clock time the next entry becomes due (converted to a delay from
 * queue.now()), or pollMs.
 *
 * Stopping: once `signal` aborts, the loop takes no more; runs in progress see the same
 * signal (supervise.ts aborts their handlers and hands their entries back), and `run`
 * resolves when every run has settled.
 */
import type { Started } from '../queue/types.ts';
import { runEntry, type RunContext } from './run-entry.ts';
import type { Waker } from './waker.ts';

export class Pool {
  /** Handlers running: the slots taken. */
  private running = 0;
  /** Whether the loop is asking the queue for work. */
  private taking = false;
  /** The waker generation at which a take last found nothing more. */
  private emptyAt = -1;
  /** Wakes the loop waiting for a free slot. */
  private slotFreed: (() => void) | null = null;
  /** Runs in progress: a handler running, or its outcome being recorded. */
  private readonly runs = new Set<Promise<void>>();

  constructor(
    private readonly ctx: RunContext,
    private readonly agents: readonly string[],
    private readonly holder: string,
    private readonly waker: Waker,
    private readonly onIdle: () => void,
  ) {}

  async run(signal: AbortSignal): Promise<void> {
    if (this.agents.length === 0) return;
    const concurrency = this.ctx.options.concurrency;
    const freed = (): void => this.slotFreed?.();
    signal.addEventListener('abort', freed, { once: true });
    try {
      while (!signal.aborted) {
        const free = Math.min(concurrency - this.running, 2 * concurrency - this.runs.size);
        if (free <= 0) {
          await new Promise<void>((resolve) => (this.slotFreed = resolve));
          this.slotFreed = null;
          continue;
        }
        const seen = this.waker.generation;
        const found = await this.take(free, signal);
        if (found === 'all') {
          // More may be takeable. Let this take's runs start first (a quick handler settles within the
          // turn and frees its slot), so the next take asks for every free slot, not the few left now.
          await new Promise((resolve) => setImmediate(resolve));
          continue;
        }
        if (found === 'some' || found === 'none') this.emptyAt = Math.max(this.emptyAt, seen);
        this.onIdle();
        const ms = found === 'failed' ? this.ctx.options.pollMs : await this.idleDelay();
        await this.waker.wait(seen, ms, signal);
      }
    } finally {
      signal.removeEventListener('abort', freed);
      await Promise.all(this.runs);
    }
  }

  /** Nothing running or recording, and a take made since the last notification found nothing more. */
  quiet(): boolean {
    return this.runs.size === 0 && !this.taking && this.emptyAt === this.waker.generation;
  }

  /** Takes up to `max` entries and starts their runs: whether it found as many as asked, some, none, or failed. */
  private async take(max: number, signal: AbortSignal): Promise<'all' | 'some' | 'none' | 'failed'> {
    this.taking = true;
    let started: Started[];
    const askedAt = this.ctx.queue.now();
    try {
      const { leaseMs: ttlMs, tenants, maxAttempts } = this.ctx.options;
      const cap = maxAttempts === null ? {} : { maxAttempts };
      started = await this.ctx.queue.takeStarted({ agents: this.agents, tenants, holder: this.holder, ttlMs, max, ...cap });
    } catch (error) {
      this.ctx.options.onEvent({ type: 'error', error, context: 'taking or running an entry' });
      return 'failed';
    } finally {
      this.taking = false;
    }
    for (const entry of started) this.start(entry, signal, askedAt);
    return started.length === max ? 'all' : started.length > 0 ? 'some' : 'none';
  }

  private start(started: Started, signal: AbortSignal, askedAt: number): void {
    this.running++;
    let slotHeld = true;
    const freeSlot = (): void => {
      if (!slotHeld) return;
      slotHeld = false;
      this.running--;
      this.slotFreed?.();
    };
    const run = runEntry(this.ctx, started, signal, askedAt, freeSlot).then(
      () => undefined,
      (error: unknown) => this.ctx.options.onEvent({ type: 'error', error, context: 'taking or running an entry' }),
    );
    this.runs.add(run);
    void run.then(() => {
      this.runs.delete(run);
      freeSlot(); // a run that ended without its handler (parked, handed back, lost)
      this.slotFreed?.();
      // A run's end may have made work (the thread's next entry, a retry due at once) whose
      // signal a remote queue sends later: the loop takes again, and idleness waits for that take.
      this.waker.notifyOne();
      if (this.runs.size === 0) this.onIdle();
    });
  }

  /**
   * Until the next entry of the pool's agents (and tenants) is due by the store clock, at most pollMs.
   * A queue that cannot answer (a remote one, unreachable) leaves it at pollMs: waiting is
   * never the place to fail, the next take reports the trouble.
   */
  private async idleDelay(): Promise<number> {
    const dueAt = await this.ctx.queue.nextDueAt(this.agents, this.ctx.options.tenants).catch(() => null);
    if (dueAt === null) return this.ctx.options.pollMs;
    return Math.min(this.ctx.options.pollMs, Math.max(1, dueAt - this.ctx.queue.now()));
  }
}
