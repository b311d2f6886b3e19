/**
 * A small reference model of the RunQueue, obviously right and slow: plain arrays,
 * linear scans. The model-based property test runs random commands against both.
 *
 * The model decides every command at once, as the queue does in the turn the command is
 * called; answers name model entries (`ModelEntry`), which the test binds to the ids the
 * queue answered (`realId`) once the queue has answered.
 */
import type { ErrorCode } from '../../../src/errors.ts';
import { partitionOf } from '../../../src/log/partitioner.ts';

export interface ModelEntry {
  /** The id the queue answered for this entry; null until its submit is answered. */
  realId: string | null;
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
  /** Order of closing, across the model: prune takes ties of closedAt by partition, then this. */
  closeSeq: number;
  pruned: boolean;
}

export type ModelAnswer = { ok: unknown } | { error: ErrorCode };

export class QueueModel {
  readonly entries: ModelEntry[] = [];
  private readonly issued: number[];
  private closes = 0;

  constructor(readonly partitions: number) {
    this.issued = new Array<number>(partitions).fill(0);
  }

  /** Answers the entry (new, or the one the key names) or a refusal. */
  submit(tenant: string, thread: string, agent: string, priority: number, key: string | null, input: string, now: number): ModelAnswer {
    const same = key === null ? undefined : this.live().find((e) => e.tenant === tenant && e.thread === thread && e.key === key);
    if (same !== undefined) {
      return same.agent === agent && same.priority === priority && same.input === input ? { ok: same } : { error: 'SubmissionKeyReused' };
    }
    const partition = partitionOf(tenant, thread, this.partitions);
    const seq = ++this.issued[partition]!;
    const entry: ModelEntry = {
      realId: null,
      tenant,
      thread,
      agent,
      priority,
      submittedAt: now,
      partition,
      seq,
      key,
      input,
      open: true,
      lease: null,
      lastEpoch: 0,
      notBefore: null,
      runIds: [],
      closedAt: null,
      closeSeq: 0,
      pruned: false,
    };
    this.entries.push(entry);
    return { ok: entry };
  }

  /** Answers the entry leased (of one of `tenants`, unless null), or null. */
  take(agents: readonly string[], tenants: readonly string[] | null, holder: string, ttlMs: number, now: number): ModelAnswer {
    const heads = this.heads().filter(
      (e) =>
        agents.includes(e.agent) &&
        (tenants === null || tenants.includes(e.tenant)) &&
        !leased(e, now) &&
        (e.notBefore === null || e.notBefore <= now),
    );
    heads.sort((a, b) => b.priority - a.priority || a.submittedAt - b.submittedAt || a.seq - b.seq || a.partition - b.partition);
    const head = heads[0];
    if (head === undefined) return { ok: null };
    this.lease(head, holder, ttlMs, now);
    return { ok: head };
  }

  /** Leases the named entry if it is its thread's head and no unexpired lease holds it (notBefore not waited for). */
  takeEntry(entryId: string, tenant: string, holder: string, ttlMs: number, now: number): ModelAnswer {
    const entry = this.find(entryId, tenant);
    if (entry === undefined) return { error: 'TicketExpired' };
    if (!entry.open || !this.heads().includes(entry) || leased(entry, now)) return { ok: null };
    this.lease(entry, holder, ttlMs, now);
    return { ok: entry };
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

  extend(entryId: string, tenant: string, holder: string, epoch: number, ttlMs: number, now: number): ModelAnswer {
    const refusal = this.leaseRefusal(entryId, tenant, holder, epoch, now);
    if (refusal !== null) return { error: refusal };
    this.find(entryId, tenant)!.lease!.expiresAt = now + ttlMs;
    return { ok: now + ttlMs };
  }

  startAttempt(entryId: string, tenant: string, holder: string, epoch: number, runId: string, now: number): ModelAnswer {
    const refusal = this.leaseRefusal(entryId, tenant, holder, epoch, now);
    if (refusal !== null) return { error: refusal };
    const entry = this.find(entryId, tenant)!;
    if (this.live().some((e) => e.tenant === tenant && e.thread === entry.thread && e.runIds.includes(runId)))
      return { error: 'RunIdReused' };
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
    return { ok: 'succeeded' };
  }

  cancel(entryId: string, tenant: string, now: number): ModelAnswer {
    const entry = this.find(entryId, tenant);
    if (entry === undefined) return { error: 'TicketExpired' };
    if (!entry.open) return { error: 'EntryClosed' };
    this.closeEntry(entry, now);
    return { ok: 'cancelled' };
  }

  deleteThread(tenant: string, thread: string, now: number): ModelAnswer {
    const open = this.live().filter((e) => e.tenant === tenant && e.thread === thread && e.open);
    for (const entry of open) this.closeEntry(entry, now);
    return { ok: open.length };
  }

  prune(lifetimeMs: number, limit: number, now: number): ModelAnswer {
    const due = this.live()
      .filter((e) => !e.open && e.closedAt! <= now - lifetimeMs)
      .sort((a, b) => a.closedAt! - b.closedAt! || a.partition - b.partition || a.closeSeq - b.closeSeq)
      .slice(0, limit);
    for (const entry of due) entry.pruned = true;
    return { ok: due.length };
  }

  entryStatus(entryId: string, tenant: string): ModelAnswer {
    const entry = this.find(entryId, tenant);
    return entry === undefined ? { error: 'TicketExpired' } : { ok: entry.open ? 'open' : 'closed' };
  }

  private lease(entry: ModelEntry, holder: string, ttlMs: number, now: number): void {
    entry.lastEpoch++;
    entry.lease = { holder, epoch: entry.lastEpoch, expiresAt: now + ttlMs };
    entry.notBefore = null;
  }

  private closeEntry(entry: ModelEntry, now: number): void {
    entry.open = false;
    entry.lease = null;
    entry.notBefore = null;
    entry.closedAt = now;
    entry.closeSeq = ++this.closes;
  }

  private find(entryId: string, tenant: string): ModelEntry | undefined {
    return this.live().find((e) => e.realId === entryId && e.tenant === tenant);
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

function leased(entry: ModelEntry, now: number): boolean {
  return entry.lease !== null && entry.lease.expiresAt > now;
}
