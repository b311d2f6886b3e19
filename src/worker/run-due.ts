/**
 * runDue: one pass over an agent's due entries, one after another. A failed run is retried
 * after its backoff, never in the same pass; an entry met again (a zero backoff) or one
 * submitted by this pass (periodic work's next entry) is handed back at once and ends the
 * pass: it is due again from the end of its run, after everything due before it.
 */
import type { RunContext } from './run-entry.ts';
import { runEntry } from './run-entry.ts';

export async function runDue(ctx: RunContext, agent: string, holder: string, signal: AbortSignal): Promise<number> {
  const met = new Set<string>();
  let runs = 0;
  while (!signal.aborted) {
    const taken = await ctx.queue.take({ agents: [agent], holder, ttlMs: ctx.options.leaseMs });
    if (taken === null) break;
    if (met.has(taken.entry.entryId)) {
      await ctx.queue.yield(taken.lease, { kind: 'defer' });
      break;
    }
    met.add(taken.entry.entryId);
    const report = await runEntry(ctx, taken, signal);
    if (report.next !== undefined) met.add(report.next);
    runs++;
  }
  return runs;
}
