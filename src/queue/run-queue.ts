/**
 * The RunQueue: a router over its partitions (partition.ts). It validates a command, routes
 * it to the partition of its (tenant, thread) or ticket, decides it against that
 * partition's view at the store clock (decide.ts) and has the partition commit the events
 * (encode, check, fold, append, wake). It also answers what spans partitions: take's choice
 * of the best head, prune's oldest closes first, the capacity counts, metrics, health and
 * nextDueAt; and it runs the retention timer.
 *
 * Folding before the append is what lets concurrent commands decide without racing
 * (JavaScript runs one decision at a time); nobody is answered before durability. A
 * command's answer is built right after its own events are folded, in the same turn as its
 * decision (`answerWhenDurable`), and handed over once they are durable: by then other
 * commands of the same tick may have changed or pruned the entry, and the caller must get
 * what was made durable for it, not what the view says later.
 */
import { RunlogError, invalidArgument } from '../errors.ts';
import type { Closed } from '../events/types.ts';
import type { EventLog } from '../log/event-log.ts';
import { partitionOf } from '../log/partitioner.ts';
import type { EntryState } from '../../projections/entry-state.ts';
import { takesBefore } from '../../projections/head-index.ts';
import { addMetrics, emptyMetrics } from '../../projections/metrics.ts';
import { leaseOf, toPublicEntry } from './public-entry.ts';
import type { PartitionView } from '../../projections/partition-view.ts';
import type { Decision } from './commands.ts';
import { decide, findEntry, isPrunable, openEntryOf } from './decide.ts';
import { newTicketSecret, parseEntryId } from './entry-id.ts';
import { Partition } from './partition.ts';
import {
  awaitOptions,
  closeFields,
  leaseArgument,
  submissionFields,
  sweepOptions,
  takeEntryRequest,
  takeRequest,
  ttl,
  yieldFields,
} from './requests.ts';
import { WorkListeners } from './work-listeners.ts';
import { describe, optionalText, requireInteger, requireName, requireNames } from '../validation/index.ts';
import type {
  Attempt,
  AwaitOptions,
  Capacity,
  CloseRequest,
  Entry,
  Lease,
  PartitionHealth,
  QueueMetrics,
  RunQueueApi,
  SubmitRequest,
  Taken,
  TakeRequest,
  Retention,
  Ticket,
  YieldRequest,
} from './types.ts';
import { checkRetention } from './queue-options.ts';
import { WarningCounter } from '../warnings.ts';
import { StoreClock } from './store-clock.ts';

export class RunQueue implements RunQueueApi {
  readonly #partitions: Partition[];
  private readonly workListeners: WorkListeners;
  private stopped = false;
  private sweepTimer: NodeJS.Timeout | undefined;

  constructor(
    readonly log: EventLog,
    views: PartitionView[],
    private readonly clock: StoreClock,
    private readonly capacity: Capacity,
    /** The largest input or result accepted: the maxInputBytes option, or the default that fits the log's records. */
    readonly maxInputBytes: number,
    private readonly warnings: WarningCounter,
  ) {
    this.workListeners = new WorkListeners(warnings.report);
    const host = { work: () => this.workListeners.notify(), warn: warnings.report };
    this.#partitions = views.map((view, partition) => new Partition(log, partition, view, host));
  }

  get partitions(): number {
    return this.#partitions.length;
  }

  /** The store clock now (store-clock.ts): never earlier than any time already stamped on the log. */
  now(): number {
    return this.clock.now();
  }

  async submit(request: SubmitRequest): Promise<Ticket> {
    this.requireRunning();
    const fields = submissionFields(request, this.maxInputBytes);
    const now = this.now();
    // notBefore and deadline are by the caller's wall clock: into store time (a no-op unless the wall stepped).
    fields.notBefore = this.clock.fromWall(fields.notBefore);
    fields.deadline = this.clock.fromWall(fields.deadline);
    const partition = this.partitionOf(fields.tenant, fields.thread);
    if (!partition.serving) await partition.ready();
    const counts = { tenant: this.openOfTenant(fields.tenant), total: this.openTotal() };
    const freshSecret = partition.view.ticketKey === null ? newTicketSecret() : null;
    const submit = { type: 'Submit', submission: fields, capacity: this.capacity, counts, freshSecret } as const;
    const decision = orThrow(decide(partition.view, submit, now));
    const created = decision.kind === 'created';
    await (created ? partition.commit(decision.events) : partition.barrier());
    return { tenant: fields.tenant, thread: fields.thread, entryId: decision.entryId, created };
  }

  /**
   * Leases the best head for `agents` across partitions. Overdue heads it comes across are
   * expired on the way; the answer hangs on the lease alone (expireOverdueHead): a lease is
   * never left behind that the caller did not get.
   */
  async take(request: TakeRequest): Promise<Taken | null> {
    this.requireRunning();
    const { agents, holder, ttlMs } = takeRequest(request);
    const now = this.now();
    const expiries: Promise<void>[] = [];
    for (;;) {
      const best = this.bestHead(agents, now);
      if (best === undefined) break;
      const [partition, entry] = best;
      const decision = decide(partition.view, { type: 'Lease', entryId: entry.entryId, holder, ttlMs }, now);
      // The index offers only heads decide finds takeable: unchanged would be a bug, and take would loop.
      if (decision.kind === 'unchanged') throw new Error(`the head index offered entry ${entry.entryId}, which is not takeable`);
      if (decision.kind === 'expired') {
        expiries.push(this.expireOverdueHead(partition, decision.events));
        continue;
      }
      const leased = partition.commit(decision.events);
      return answerWhenDurable(Promise.all([...expiries, leased]), taken(entry));
    }
    await Promise.all(expiries);
    return null;
  }

  async takeEntry(tenant: string, entryId: string, request: Omit<TakeRequest, 'agents'>): Promise<Taken | null> {
    this.requireRunning();
    const { holder, ttlMs } = takeEntryRequest(request);
    const partition = this.partitionOfEntry(tenant, entryId);
    if (!partition.serving) await partition.ready();
    const decision = orThrow(decide(partition.view, { type: 'LeaseEntry', tenant, entryId, holder, ttlMs }, this.now()));
    if (decision.kind === 'unchanged') return null;
    const committed = partition.commit(decision.events);
    if (decision.kind === 'expired') return answerWhenDurable(committed, null);
    return answerWhenDurable(committed, taken(partition.view.entries.get(entryId)!));
  }

  async extend(lease: Lease, ttlMs: number): Promise<Lease> {
    const { partition, checked } = this.leaseCommand(lease);
    const ttlMsChecked = ttl(ttlMs);
    if (!partition.serving) await partition.ready();
    const [event] = orThrow(decide(partition.view, { type: 'Extend', lease: checked, ttlMs: ttlMsChecked }, this.now())).events;
    const extended = partition.commit([event]);
    // The stored lease, never the caller's copy (whose thread or agent it may have edited).
    return answerWhenDurable(extended, leaseOf(partition.view.entries.get(event.entryId)!)!);
  }

  async startAttempt(lease: Lease, runId: string): Promise<Attempt> {
    const { partition, checked } = this.leaseCommand(lease);
    const run = requireName('runId', runId);
    if (!partition.serving) await partition.ready();
    const [event] = orThrow(decide(partition.view, { type: 'StartAttempt', lease: checked, runId: run }, this.now())).events;
    await partition.commit([event]);
    return { runId: event.runId, attempt: event.attempt, epoch: event.epoch, startedAt: event.at };
  }

  async yield(lease: Lease, request: YieldRequest): Promise<boolean> {
    const { partition, checked } = this.leaseCommand(lease);
    const fields = yieldFields(request);
    if (!partition.serving) await partition.ready();
    const decision = orThrow(decide(partition.view, { type: 'Yield', lease: checked, request: fields }, this.now()));
    if (decision.kind === 'unchanged') return false;
    await partition.commit(decision.events);
    return true;
  }

  async close(lease: Lease, request: CloseRequest): Promise<Entry> {
    const { partition, checked } = this.leaseCommand(lease);
    const fields = closeFields(request, this.maxInputBytes);
    if (!partition.serving) await partition.ready();
    const [event] = orThrow(decide(partition.view, { type: 'Close', lease: checked, request: fields }, this.now())).events;
    const closed = partition.commit([event]);
    return answerWhenDurable(closed, toPublicEntry(partition.view.entries.get(event.entryId)!));
  }

  async cancel(tenant: string, entryId: string, reason?: string): Promise<Entry> {
    this.requireRunning();
    const partition = this.partitionOfEntry(tenant, entryId);
    const why = optionalText('reason', reason, 64 * 1024);
    if (!partition.serving) await partition.ready();
    const { events } = orThrow(decide(partition.view, { type: 'Cancel', tenant, entryId, reason: why }, this.now()));
    const cancelled = partition.commit(events);
    return answerWhenDurable(cancelled, toPublicEntry(partition.view.entries.get(entryId)!));
  }

  async entry(tenant: string, entryId: string): Promise<Entry> {
    this.requireRunning();
    const partition = this.partitionOfEntry(tenant, entryId);
    return partition.durableRead(() => toPublicEntry(findEntry(partition.view, tenant, entryId)));
  }

  async openEntries(tenant: string, thread: string): Promise<Entry[]> {
    this.requireRunning();
    const partition = this.partitionOf(requireName('tenant', tenant), requireName('thread', thread));
    return partition.durableRead(() => (partition.view.thread(tenant, thread)?.openEntries() ?? []).map(toPublicEntry));
  }

  async deleteThread(tenant: string, thread: string): Promise<number> {
    this.requireRunning();
    const partition = this.partitionOf(requireName('tenant', tenant), requireName('thread', thread));
    if (!partition.serving) await partition.ready();
    const { events } = decide(partition.view, { type: 'DeleteThread', tenant, thread }, this.now());
    if (events.length > 0) await partition.commit(events);
    return events.length;
  }

  /** Removes up to `limit` entries closed at least ticketLifetimeMs ago, oldest close first, across partitions. */
  async prune(ticketLifetimeMs: number, limit: number): Promise<number> {
    this.requireRunning();
    requireInteger('ticketLifetimeMs', ticketLifetimeMs, 0);
    requireInteger('limit', limit, 0);
    const closedBy = this.now() - ticketLifetimeMs;
    const due = this.#partitions
      .flatMap((partition) =>
        partition.view.oldestClosed(limit, (entry) => isPrunable(entry, closedBy)).map((entry) => ({ partition, entry })),
      )
      .sort((a, b) => a.entry.closedAt! - b.entry.closedAt!)
      .slice(0, limit);
    const perPartition = new Map<Partition, number>();
    for (const { partition } of due) perPartition.set(partition, (perPartition.get(partition) ?? 0) + 1);
    // What each partition pruned (a partition being rebuilt decides once it serves again).
    const pruned = await Promise.all([...perPartition].map(([partition, count]) => this.prunePartition(partition, closedBy, count)));
    return pruned.reduce((a, b) => a + b, 0);
  }

  /** Closes `expired` every open entry whose start deadline passed unstarted; answers how many. */
  async expireOverdue(): Promise<number> {
    this.requireRunning();
    const commits = this.#partitions.map(async (partition) => {
      if (!partition.serving) await partition.ready();
      const { events } = decide(partition.view, EXPIRE, this.now());
      if (events.length > 0) await partition.commit(events);
      return events.length;
    });
    return (await Promise.all(commits)).reduce((a, b) => a + b, 0);
  }

  /** One retention sweep: expire overdue entries, then prune up to `limit` closed entries past their lifetime. */
  async sweep(retention: Pick<Retention, 'ticketLifetimeMs' | 'limit'>): Promise<{ expired: number; pruned: number }> {
    this.requireRunning();
    const { ticketLifetimeMs, limit } = sweepOptions(retention);
    // Both decided now, in this turn, like every command: the prune sees the expiries folded.
    const expiring = this.expireOverdue();
    const pruning = this.prune(ticketLifetimeMs, limit);
    const [expired, pruned] = await Promise.all([expiring, pruning]);
    return { expired, pruned };
  }

  /** Runs `sweep` every `everyMs` until stop (the timer does not keep the process alive). */
  startSweeping(retention: Retention): void {
    this.requireRunning();
    this.sweepEvery(checkRetention(retention));
  }

  /** startSweeping on a running queue, with a retention checked already (openRunQueue's option, checked with the others). */
  sweepEvery({ ticketLifetimeMs, everyMs, limit }: Required<Retention>): void {
    clearInterval(this.sweepTimer);
    this.sweepTimer = setInterval(() => {
      this.sweep({ ticketLifetimeMs, limit }).catch((error: unknown) => this.reportSweepFailure(error));
    }, everyMs);
    this.sweepTimer.unref();
  }

  /** The closed entry, once its close is durable; null when timeoutMs passes first; rejects when signal aborts. */
  async awaitClosed(tenant: string, entryId: string, options: AwaitOptions = {}): Promise<Entry | null> {
    this.requireRunning();
    const { signal, timeoutMs } = awaitOptions(options);
    const partition = this.partitionOfEntry(tenant, entryId);
    // Open now: wait in this same turn, so its close (folded later) wakes the waiter once durable.
    if (openEntryOf(partition.view, tenant, entryId) !== undefined) return partition.awaitClose(entryId, signal, timeoutMs);
    return this.entry(tenant, entryId);
  }

  nextDueAt(agents: readonly string[]): number | null {
    const names = requireNames('agents', agents);
    let earliest: number | null = null;
    for (const partition of this.#partitions) {
      const at = partition.view.nextDueAt(names);
      if (at !== null && (earliest === null || at < earliest)) earliest = at;
    }
    return earliest;
  }

  onWork(listener: () => void): () => void {
    return this.workListeners.add(listener);
  }

  metrics(): QueueMetrics {
    const counters = emptyMetrics();
    for (const partition of this.#partitions) addMetrics(counters, partition.view.metrics);
    return { ...counters, open: this.openTotal(), warnings: this.warnings.counts() };
  }

  health(): PartitionHealth[] {
    return this.#partitions.map((partition) => partition.health());
  }

  /** Refuses new commands with Stopped, waits for appends in flight, and closes the log. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    clearInterval(this.sweepTimer);
    await Promise.all(this.#partitions.map((partition) => partition.barrier()));
    for (const partition of this.#partitions) partition.stop();
    await this.log.close();
  }

  /** The views, for tests and tools comparing them with a replay. */
  views(): readonly PartitionView[] {
    return this.#partitions.map((partition) => partition.view);
  }

  /**
   * Expires an overdue head that a take came across. It is a command of its own: if it
   * fails, its partition rebuilds and a later take or sweep expires the entry; the take,
   * whose answer is its lease or null, does not fail for it. The failure is a warning.
   */
  private async expireOverdueHead(partition: Partition, events: [Closed]): Promise<void> {
    const [{ entryId }] = events;
    try {
      await partition.commit(events);
    } catch (error) {
      const why = error instanceof Error ? error.message : String(error);
      const message = `expiring the overdue entry ${entryId} of partition ${partition.partition}, which a take came across, failed: ${why}`;
      this.warnings.report({ code: 'RUNLOG_EXPIRE', message });
    }
  }

  /** A failed sweep is retried at the next tick; the failure is a warning (RUNLOG_SWEEP). */
  private reportSweepFailure(error: unknown): void {
    if (error instanceof RunlogError && error.code === 'Stopped') return;
    this.warnings.report({ code: 'RUNLOG_SWEEP', message: `runlog retention sweep failed: ${String(error)}` });
  }

  /** Prunes up to `limit` entries of the partition; answers how many it pruned. */
  private async prunePartition(partition: Partition, closedBy: number, limit: number): Promise<number> {
    if (!partition.serving) await partition.ready();
    const decision = decide(partition.view, { type: 'Prune', closedBy, limit }, this.now());
    if (decision.kind === 'unchanged') return 0;
    await partition.commit(decision.events);
    return decision.events[0].entryIds.length;
  }

  private bestHead(agents: readonly string[], now: number): [Partition, EntryState] | undefined {
    let best: [Partition, EntryState] | undefined;
    for (const partition of this.#partitions) {
      if (!partition.serving) continue;
      const candidate = partition.view.bestHead(agents, now);
      if (candidate !== undefined && (best === undefined || takesBefore(candidate, best[1]))) best = [partition, candidate];
    }
    return best;
  }

  private leaseCommand(lease: Lease): { partition: Partition; checked: Lease } {
    this.requireRunning();
    const checked = leaseArgument(lease);
    return { partition: this.partitionOfEntry(checked.tenant, checked.entryId), checked };
  }

  private partitionOf(tenant: string, thread: string): Partition {
    return this.#partitions[partitionOf(tenant, thread, this.#partitions.length)]!;
  }

  /** The partition of `tenant`'s entry `entryId` (the tenant is checked here; isolation is the decider's). */
  private partitionOfEntry(tenant: string, entryId: string): Partition {
    requireName('tenant', tenant);
    // Any string is looked up (one that is no ticket id was never issued); anything else is a bad argument.
    if (typeof entryId !== 'string') throw invalidArgument(`entryId must be a string, got ${describe(entryId)}`);
    const parsed = parseEntryId(entryId, this.#partitions.length);
    if (parsed === null) throw new RunlogError('TicketNotFound', `ticket ${describe(entryId)} was never issued`);
    return this.#partitions[parsed.partition]!;
  }

  private openOfTenant(tenant: string): number {
    return this.#partitions.reduce((sum, partition) => sum + (partition.view.openByTenant.get(tenant) ?? 0), 0);
  }

  private openTotal(): number {
    return this.#partitions.reduce((sum, partition) => sum + partition.view.openCount, 0);
  }

  private requireRunning(): void {
    if (this.stopped) throw new RunlogError('Stopped', 'the run queue was stopped');
  }
}

/** What take answers for an entry whose lease it has just folded (so the lease is there). */
function taken(entry: EntryState): Taken {
  return { lease: leaseOf(entry)!, entry: toPublicEntry(entry) };
}

/** `answer`, built when the command's events were folded, once they are durable. */
async function answerWhenDurable<T>(durable: Promise<unknown>, answer: T): Promise<T> {
  await durable;
  return answer;
}

/** The decision, unless it is a refusal: then its error is thrown. */
function orThrow<D extends Decision>(decision: D): Exclude<D, { kind: 'refused' }> {
  if (decision.kind === 'refused') throw decision.error;
  return decision as Exclude<D, { kind: 'refused' }>;
}

const EXPIRE = { type: 'Expire' } as const;
