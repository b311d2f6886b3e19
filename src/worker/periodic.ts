/**
 * Periodic work (handleEvery). Its pending entry lives in the log, so a restart keeps it:
 * one open entry per periodic agent on a fixed thread (`every/<agent>` of the periodic
 * tenant), submitted with strategy 'reject' so two workers can never make two; a new one
 * is submitted when a run closes the previous (keyed by it, so a repeated submission names
 * the same entry). The pool never takes these agents: a timer every everyMs runs what is
 * due (runDue), so the work runs on the timer, not as soon as it is due.
 */
import { isRunlogError } from '../errors.ts';
import type { Entry } from '../queue/types.ts';
import type { RunContext } from './run-entry.ts';
import { delay } from './timers.ts';

export function periodicThread(agent: string): string {
  return `every/${agent}`;
}

export class Periodic {
  constructor(
    private readonly ctx: RunContext,
    private readonly everyMs: ReadonlyMap<string, number>,
    private readonly runDue: (agent: string, signal: AbortSignal) => Promise<number>,
  ) {}

  get agents(): string[] {
    return [...this.everyMs.keys()];
  }

  isPeriodicEntry(entry: Entry): boolean {
    return (
      this.everyMs.has(entry.agent) && entry.tenant === this.ctx.options.periodicTenant && entry.thread === periodicThread(entry.agent)
    );
  }

  /** Makes sure the agent has its one open entry; answers the id when this call submitted it. */
  async ensure(agent: string, key?: string): Promise<string | null> {
    const request = {
      tenant: this.ctx.options.periodicTenant,
      thread: periodicThread(agent),
      agent,
      input: new Uint8Array(0),
      strategy: 'reject' as const,
    };
    try {
      const ticket = await this.ctx.queue.submit(key === undefined ? request : { ...request, key });
      if (!ticket.created) return null;
      this.ctx.metrics.add('enqueued', agent);
      this.ctx.options.onEvent({ type: 'enqueued', entryId: ticket.entryId, agent });
      return ticket.entryId;
    } catch (error) {
      if (isRunlogError(error, 'ThreadBusy')) return null;
      throw error;
    }
  }

  /** After a periodic entry closed: its successor, keyed by it. */
  async next(closed: Entry): Promise<string | null> {
    if (!this.isPeriodicEntry(closed)) return null;
    return this.ensure(closed.agent, `after/${closed.entryId}`);
  }

  /** Ensures every periodic entry and ticks every agent's timer (started at once) until `signal` aborts. */
  async run(signal: AbortSignal): Promise<void> {
    await Promise.all(this.agents.map((agent) => this.loop(agent, this.everyMs.get(agent)!, signal)));
  }

  private async loop(agent: string, everyMs: number, signal: AbortSignal): Promise<void> {
    const ensured = this.tick(agent, 'ensuring the periodic entry', () => this.ensure(agent));
    for (let first = true; ; first = false) {
      await delay(this.ctx.options.timers, everyMs, signal);
      if (first) await ensured;
      if (signal.aborted) return;
      await this.tick(agent, 'ensuring the periodic entry', () => this.ensure(agent));
      await this.tick(agent, 'running due periodic work', () => this.runDue(agent, signal));
    }
  }

  private async tick(agent: string, context: string, action: () => Promise<unknown>): Promise<void> {
    try {
      await action();
    } catch (error) {
      this.ctx.options.onEvent({ type: 'error', error, context: `${context} of agent ${JSON.stringify(agent)}` });
    }
  }
}
