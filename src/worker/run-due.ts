/**
 * runDue: one pass over an agent's due entries, one after another. A failed run is retried
 * after its backoff, never in the same pass; an entry met again (a zero backoff) or one
 * submitted by this pass (periodic work's next entry) is not run: it is held aside (its
 * lease keeps take from answering it again) and handed back when the pass ends, so the
 * pass still takes everything else that was due.
 */
import type { Lease } from '../queue/types.ts';
import type { RunContext } from './run-entry.ts';
import { runEntry } from './run-entry.ts';

export async function runDue(ctx: RunContext, agent: string, holder: string, signal: AbortSignal): Promise<number> {
  const met = new Set<string>();
  const heldAside: Lease[] = [];
  let runs = 0;
  try {
    while (!signal.aborted) {
      const askedAt = ctx.queue.now();
      const taken = await ctx.queue.take({ agents: [agent], tenants: ctx.options.tenants, holder, ttlMs: ctx.options.leaseMs });
      if (taken === null) break;
      if (met.has(taken.entry.entryId)) {
        heldAside.push(taken.lease);
        continue;
      }
      met.add(taken.entry.entryId);
      const report = await runEntry(ctx, taken, signal, askedAt);
      if (report.next !== undefined) met.add(report.next);
      runs++;
    }
  } finally {
    await Promise.all(heldAside.map((lease) => ctx.queue.yield(lease, { kind: 'defer' }).catch(() => false)));
  }
  return runs;
}
