/**
 * A small reference model of the RunQueue, obviously right and slow: plain arrays,
 * linear scans. The model-based property test runs random commands against both.
 */
import type { ErrorCode } from '../../src/errors.ts';

export interface ModelEntry {
  entryId: string;
  tenant: string;
  thread: string;
  agent: string;
  priority: number;
  submittedAt: number;
  partition: number;
  seq: number;
  key: string | null;
  input: string;
  open: boolean;
  lease: { holder: string; epoch: number; expiresAt: number } | null;
  lastEpoch: number;
  notBefore: number | null;
  runIds: string[];
  closedAt: number | null;
  pruned: boolean;
}

export type ModelAnswer = { ok: unknown } | { error: ErrorCode };

export class QueueModel {
  readonly entries: ModelEntry[] = [];

  submit(tenant: string, thread: string, agent: string, priority: number, key: string | null, input: string, now: number, entryId: () => string): ModelAnswer {
    const same = key === null ? undefined : this.live().find((e) => e.tenant === tenant && e.thread === thread && e.key === key);
    if (same !== undefined) {
      return same.agent === agent && same.priority === priority && same.input === input ? { ok: same.entryId } : { error: 'SubmissionKeyReused' };
    }
    const id = entryId();
    const [partition, seq] = id.split('-').map(Number) as [number, number];
    this.entries.push({
      entryId: id, tenant, thread, agent, priority, submittedAt: now, partition, seq, key, input,
      open: true, lease: null, lastEpoch: 0, notBefore: null, runIds: [], closedAt: null, pruned: false,
    });
    return { ok: id };
  }

  take(agents: readonly string[], holder: string, ttlMs: number, now: number): ModelAnswer {
    const heads = this.heads().filter(
      (e) => agents.includes(e.agent) && (e.lease === null || e.lease.expiresAt <= now) && (e.notBefore === null || e.notBefore <= now),
    );
    heads.sort((a, b) => b.priority - a.priority || a.submittedAt - b.submittedAt || a.seq - b.seq || a.partition - b.partition);
    const head = heads[0];
    if (head === undefined) return { ok: null };
    head.lastEpoch++;
    head.lease = { holder, epoch: head.lastEpoch, expiresAt: now + ttlMs };
    head.notBefore = null;
    return { ok: head.entryId };
  }

  /** The checks every lease command makes, in order; null when the lease may act. */
  leaseRefusal(entryId: string, tenant: string, holder: string, epoch: number, now: number): ErrorCode | null {
    const entry = this.find(entryId, tenant);
    if (entry === undefined) return 'TicketExpired';
    if (!entry.open) return 'EntryClosed';
    const lease = entry.lease;
    if (lease === null || lease.holder !== holder || lease.epoch !== epoch || lease.expiresAt <= now) return 'LeaseNotCurrent';
    return null;
  }

  startAttempt(entryId: string, tenant: string, holder: string, epoch: number, runId: string, now: number): ModelAnswer {
    const refusal = this.leaseRefusal(entryId, tenant, holder, epoch, now);
    if (refusal !== null) return { error: refusal };
    const entry = this.find(entryId, tenant)!;
    if (this.live().some((e) => e.tenant === tenant && e.thread === entry.thread && e.runIds.includes(runId))) return { error: 'RunIdReused' };
    entry.runIds.push(runId);
    return { ok: entry.runIds.length };
  }

  yield(entryId: string, tenant: string, holder: string, epoch: number, delayMs: number | null, now: number): ModelAnswer {
    const refusal = this.leaseRefusal(entryId, tenant, holder, epoch, now);
    if (refusal === 'TicketExpired' || refusal === 'EntryClosed') return { error: refusal };
    if (refusal !== null) return { ok: false };
    const entry = this.find(entryId, tenant)!;
    entry.lease = null;
    entry.notBefore = delayMs === null || delayMs === 0 ? null : now + delayMs;
    return { ok: true };
  }

  close(entryId: string, tenant: string, holder: string, epoch: number, now: number): ModelAnswer {
    const refusal = this.leaseRefusal(entryId, tenant, holder, epoch, now);
    if (refusal !== null) return { error: refusal };
    this.closeEntry(this.find(entryId, tenant)!, now);
    return { ok: 'closed' };
  }

  cancel(entryId: string, tenant: string, now: number): ModelAnswer {
    const entry = this.find(entryId, tenant);
    if (entry === undefined) return { error: 'TicketExpired' };
    if (!entry.open) return { error: 'EntryClosed' };
    this.closeEntry(entry, now);
    return { ok: 'cancelled' };
  }

  prune(lifetimeMs: number, limit: number, now: number): ModelAnswer {
    const due = this.live()
      .filter((e) => !e.open && e.closedAt! <= now - lifetimeMs)
      .sort((a, b) => a.closedAt! - b.closedAt!)
      .slice(0, limit);
    for (const entry of due) entry.pruned = true;
    return { ok: due.length };
  }

  entryStatus(entryId: string, tenant: string): ModelAnswer {
    const entry = this.find(entryId, tenant);
    return entry === undefined ? { error: 'TicketExpired' } : { ok: entry.open ? 'open' : 'closed' };
  }

  private closeEntry(entry: ModelEntry, now: number): void {
    entry.open = false;
    entry.lease = null;
    entry.notBefore = null;
    entry.closedAt = now;
  }

  private find(entryId: string, tenant: string): ModelEntry | undefined {
    return this.live().find((e) => e.entryId === entryId && e.tenant === tenant);
  }

  private live(): ModelEntry[] {
    return this.entries.filter((e) => !e.pruned);
  }

  private heads(): ModelEntry[] {
    const seen = new Set<string>();
    const heads: ModelEntry[] = [];
    for (const entry of this.live()) {
      const thread = `${entry.tenant}/${entry.thread}`;
      if (!entry.open || seen.has(thread)) continue;
      seen.add(thread);
      heads.push(entry);
    }
    return heads;
  }
}
