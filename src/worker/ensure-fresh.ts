/**
 * ensureFresh: before a caller reads what an agent derives for a thread, bring that work up
 * to date. Loop until nothing of the agent is open on the thread:
 *   - its entry is the thread's head and no current lease holds it: lease it (takeEntry,
 *     which does not wait out a delay or backoff) and run it here, in the caller's context;
 *     a failed run rejects with the handler's error, a parked one with Parked;
 *   - otherwise (running elsewhere, or behind another entry): wait for the head to close,
 *     for work news (a yield makes it takeable), or for its lease to expire by the store
 *     clock; a head of ours that closes failed is Parked.
 */
import { RunlogError, isRunlogError } from '../errors.ts';
import type { Entry } from '../queue/types.ts';
import { asError } from './failure.ts';
import { runEntry, type RunContext, type RunReport } from './run-entry.ts';

const NEVER = new AbortController().signal;

export async function ensureFresh(
  ctx: RunContext,
  holder: string,
  tenant: string,
  thread: string,
  agent: string,
  signal: AbortSignal = NEVER,
): Promise<undefined> {
  // The entry of ours that last ran elsewhere while we waited: once it is no longer our target, it closed.
  let awaited: string | undefined;
  for (;;) {
    signal.throwIfAborted();
    const open = await ctx.queue.openEntries(tenant, thread);
    const target = open.find((entry) => entry.agent === agent);
    if (awaited !== undefined && target?.entryId !== awaited) await throwIfParked(ctx, tenant, awaited);
    awaited = undefined;
    if (target === undefined) return undefined;
    const head = open[0]!;
    if (head.entryId === target.entryId) {
      // Asked, not judged here: the queue judges a lease in its partition's time, which may run
      // ahead of queue.now() (src/queue/partition-lead.ts). Leased elsewhere, it answers null.
      const askedAt = ctx.queue.now();
      const taken = await ctx.queue.takeEntry(tenant, target.entryId, { holder, ttlMs: ctx.options.leaseMs });
      if (taken !== null) {
        settle(await runEntry(ctx, taken, signal, askedAt), signal);
        continue;
      }
    }
    const closed = await waitForChange(ctx, head, signal);
    if (closed?.entryId === target.entryId && closed.outcome === 'failed') throw parked(closed.entryId, closed.error);
    // Woken before its close was seen (work news, the lease's expiry): the next look tells whether it closed, and how.
    if (closed?.entryId !== target.entryId) awaited = target.entryId;
  }
}

/**
 * Parked if `entryId` (ours, run elsewhere) closed failed. A wake-up (work news) can come
 * just before its close, and the next look finds it gone from the open entries: its outcome
 * is read here. One pruned meanwhile tells nothing more (TicketExpired): not parked.
 */
async function throwIfParked(ctx: RunContext, tenant: string, entryId: string): Promise<void> {
  const entry = await ctx.queue.entry(tenant, entryId).catch((error: unknown) => {
    if (isRunlogError(error, 'TicketExpired')) return null;
    throw error;
  });
  if (entry?.status === 'closed' && entry.outcome === 'failed') throw parked(entryId, entry.error);
}

/** Returns when the run succeeded or lost its lease (the loop looks again); throws otherwise. */
function settle(report: RunReport, signal: AbortSignal): void {
  switch (report.outcome) {
    case 'succeeded':
    case 'lost':
      return;
    case 'retried':
      throw asError(report.error);
    case 'parked':
      throw parked(report.entry.entryId, report.errorText ?? null, report.error);
    case 'deferred':
      throw signal.reason;
    case 'abandoned':
      throw new RunlogError('Stopped', `the handler of entry ${report.entry.entryId} did not settle after its signal aborted`);
  }
}

function parked(entryId: string, error: string | null, cause?: unknown): RunlogError {
  return new RunlogError('Parked', `entry ${entryId} is parked: ${error ?? 'no error recorded'}`, cause === undefined ? {} : { cause });
}

/** Waits for `head` to close, for work news, or for its lease to run out; the closed entry or null. */
async function waitForChange(ctx: RunContext, head: Entry, signal: AbortSignal): Promise<Entry | null> {
  const done = new AbortController();
  const stop = (): void => done.abort();
  signal.addEventListener('abort', stop, { once: true });
  const unlisten = ctx.queue.onWork(stop);
  const untilExpiry = head.lease === null ? ctx.options.pollMs : Math.max(1, head.lease.expiresAt - ctx.queue.now());
  const handle = ctx.options.timers.setTimeout(stop, Math.min(untilExpiry, ctx.options.pollMs));
  try {
    return await ctx.queue.awaitClosed(head.tenant, head.entryId, { signal: done.signal });
  } catch (error) {
    if (done.signal.aborted) return null;
    throw error;
  } finally {
    signal.removeEventListener('abort', stop);
    unlisten();
    ctx.options.timers.clearTimeout(handle);
  }
}
