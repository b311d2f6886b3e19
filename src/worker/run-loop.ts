/**
 * The pool: `concurrency` slots, each looping: take an entry of the pool's agents (of the
 * worker's tenants, when it has them) and run
 * it; or, finding none, wait idle without polling the queue hot. An idle slot wakes on the
 * first of: the queue's onWork (a submission, yield or close on this process; one slot per
 * notification, and a slot that finds work wakes the next), `wake()`, the store-clock time
 * the next entry becomes due (converted to a delay from queue.now()), or pollMs.
 *
 * Stopping: once `signal` aborts, no slot takes again; runs in progress see the same signal
 * (supervise.ts aborts their handlers and hands their entries back), and `run` resolves
 * when every slot has left its loop.
 */
import type { Taken } from '../queue/types.ts';
import { runEntry, type RunContext } from './run-entry.ts';
import type { Waker } from './waker.ts';

export class Pool {
  /** Slots taking or running. */
  private busy = 0;
  /** The waker generation at which a take last found nothing. */
  private emptyAt = -1;

  constructor(
    private readonly ctx: RunContext,
    private readonly agents: readonly string[],
    private readonly holder: string,
    private readonly waker: Waker,
    private readonly onIdle: () => void,
  ) {}

  async run(signal: AbortSignal): Promise<void> {
    if (this.agents.length === 0) return;
    await Promise.all(Array.from({ length: this.ctx.options.concurrency }, () => this.slot(signal)));
  }

  /** Nothing running, and a take made since the last notification found nothing. */
  quiet(): boolean {
    return this.busy === 0 && this.emptyAt === this.waker.generation;
  }

  private async slot(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      const seen = this.waker.generation;
      const found = await this.takeAndRun(signal);
      if (found === 'ran') continue;
      if (found === 'empty') this.emptyAt = Math.max(this.emptyAt, seen);
      this.onIdle();
      await this.waker.wait(seen, found === 'empty' ? await this.idleDelay() : this.ctx.options.pollMs, signal);
    }
  }

  private async takeAndRun(signal: AbortSignal): Promise<'ran' | 'empty' | 'failed'> {
    this.busy++;
    try {
      const { leaseMs: ttlMs, tenants } = this.ctx.options;
      const taken: Taken | null = await this.ctx.queue.take({ agents: this.agents, tenants, holder: this.holder, ttlMs });
      if (taken === null) return 'empty';
      this.waker.notifyOne();
      await runEntry(this.ctx, taken, signal);
      return 'ran';
    } catch (error) {
      this.ctx.options.onEvent({ type: 'error', error, context: 'taking or running an entry' });
      return 'failed';
    } finally {
      this.busy--;
    }
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
