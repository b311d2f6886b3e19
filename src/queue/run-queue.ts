/**
 * The RunQueue shell: validates a command, decides it against the partition's view at
 * the store clock (decide.ts), checks its records fit the log (record-bounds.ts), folds
 * the events at once, appends them through the partition's group-committing writer and
 * answers once they are durable.
 *
 * Folding before the append is what lets concurrent commands decide without racing
 * (JavaScript runs one decision at a time); nobody is answered before durability. If an
 * append fails, the partition's view may hold events the log does not, so the
 * partition stops serving and is rebuilt from the log; commands meanwhile wait for the
 * rebuild (partition-slot.ts).
 *
 * A command's answer is built right after its own events are folded, in the same turn as
 * its decision (`answerWhenDurable`), and handed over once they are durable: by then
 * other commands of the same tick may have changed or pruned the entry, and the caller
 * must get what was made durable for it, not what the view says later.
 */
import { callListener } from '../call-listener.ts';
import { RunlogError, invalidArgument } from '../errors.ts';
import { encodeEvent } from '../events/codec.ts';
import { attemptKey, recordKeyOf, stateKey, submissionKey } from '../events/keys.ts';
import type { RunlogEvent } from '../events/types.ts';
import type { AppendRecord, EventLog, LogConfig } from '../log/event-log.ts';
import { checkEventLog } from '../log/log-arguments.ts';
import { openLog } from '../log/open-log.ts';
export { DEFAULT_PARTITIONS } from '../log/open-log.ts';
import { partitionOf } from '../log/partitioner.ts';
import { replayPartition } from '../projector/replay.ts';
import type { EntryState } from '../../projections/entry-state.ts';
import { takesBefore } from '../../projections/head-index.ts';
import { addMetrics, emptyMetrics } from '../../projections/metrics.ts';
import { leaseOf, toPublicEntry } from './public-entry.ts';
import type { PartitionView } from '../../projections/partition-view.ts';
import { ClosedWaiters } from './closed-waiters.ts';
import * as decide from './decide.ts';
import { newTicketSecret, parseEntryId } from './entry-id.ts';
import { closeFields, leaseArgument, submissionFields, takeEntryRequest, takeRequest, ttl, yieldFields } from './requests.ts';
import {
  describe,
  optionalOptions,
  optionalSignal,
  optionalText,
  orDefault,
  requireInteger,
  requireName,
  requireNames,
  requireObject,
  requireTimerMs,
} from '../validation/index.ts';
import type {
  Attempt,
  AwaitOptions,
  Capacity,
  CloseRequest,
  Entry,
  Lease,
  QueueMetrics,
  RunQueueApi,
  RunQueueOptions,
  SubmitRequest,
  Taken,
  TakeRequest,
  Retention,
  Ticket,
  YieldRequest,
} from './types.ts';
import { PartitionSlot } from './partition-slot.ts';
import { checkQueueOptions, checkRetention, inputLimit, QUEUE_OPTION_KEYS, type QueueSettings } from './queue-options.ts';
import { checkRecordsFit } from './record-bounds.ts';
import { WarningCounter } from '../warnings.ts';
import { StoreClock } from './store-clock.ts';
export { DEFAULT_MAX_INPUT_BYTES } from './queue-options.ts';

export async function openRunQueue(options: RunQueueOptions): Promise<RunQueue> {
  const { log: config, partitions, ...settings } = requireObject('options', options, QUEUE_OPTION_KEYS);
  // Omitted: the log's own default (a file log keeps the count it was created with).
  const count = partitions === undefined ? undefined : requireInteger('partitions', partitions, 1, 10_000);
  const checked = checkQueueOptions(settings);
  const log = await openLog(config as LogConfig, count, checked.warnings.report);
  try {
    return await queueOnLog(log, checked);
  } catch (error) {
    await log.close();
    throw error;
  }
}

/**
 * A RunQueue over a log the caller opened (tests wrap real logs to inject faults).
 * Replays every partition of the log into the view before serving. The log's own
 * warnings (a torn tail cut on open) went where the caller's log options sent them.
 */
export async function openRunQueueOnLog(log: EventLog, options: Omit<RunQueueOptions, 'log' | 'partitions'> = {}): Promise<RunQueue> {
  return queueOnLog(checkEventLog(log), checkQueueOptions(options));
}

async function queueOnLog(log: EventLog, settings: QueueSettings): Promise<RunQueue> {
  const { clock, capacity, maxInputBytes: asked, retention, warnings } = settings;
  const maxInputBytes = inputLimit(asked, log);
  const partitions = Array.from({ length: log.partitions }, (_, p) => p);
  if (log.claim !== undefined) await Promise.all(partitions.map((p) => log.claim!(p)));
  const views = await Promise.all(partitions.map((p) => replayPartition(log, p)));
  const latestAt = views.reduce((latest, view) => Math.max(latest, view.lastAt), 0);
  const queue = new RunQueue(log, views, new StoreClock(clock, latestAt, warnings.report), capacity, maxInputBytes, warnings);
  if (retention !== null) queue.startSweeping(retention);
  return queue;
}

export class RunQueue implements RunQueueApi {
  private readonly slots: PartitionSlot[];
  private readonly waiters = new ClosedWaiters();
  private readonly workListeners = new Set<() => void>();
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
    const host = { stopped: () => this.stopped, servingAgain: () => this.notifyWork() };
    this.slots = views.map((view, partition) => new PartitionSlot(log, partition, view, host));
  }

  get partitions(): number {
    return this.slots.length;
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
    const slot = this.slotOf(fields.tenant, fields.thread);
    if (!slot.serving) await slot.ready();
    const counts = { tenant: this.openOfTenant(fields.tenant), total: this.openTotal() };
    const freshSecret = slot.view.ticketKey === null ? newTicketSecret() : null;
    const decision = decide.decideSubmit(slot.view, fields, now, this.capacity, counts, freshSecret);
    const created = decision.events.length > 0;
    await (created ? this.commit(slot, decision.events) : slot.writer.barrier());
    return { tenant: fields.tenant, thread: fields.thread, entryId: decision.entryId, created };
  }

  async take(request: TakeRequest): Promise<Taken | null> {
    this.requireRunning();
    const { agents, holder, ttlMs } = takeRequest(request);
    const now = this.now();
    const expiries: Promise<void>[] = [];
    for (;;) {
      const best = this.bestHead(agents, now);
      if (best === undefined) break;
      const [slot, entry] = best;
      if (decide.isOverdue(entry, now)) {
        expiries.push(this.commit(slot, [decide.decideExpire(entry, now)]));
        continue;
      }
      const leased = this.commit(slot, [decide.decideLease(entry, holder, ttlMs, now)]);
      return answerWhenDurable(Promise.all([...expiries, leased]), taken(entry));
    }
    await Promise.all(expiries);
    return null;
  }

  async takeEntry(tenant: string, entryId: string, request: Omit<TakeRequest, 'agents'>): Promise<Taken | null> {
    this.requireRunning();
    const { holder, ttlMs } = takeEntryRequest(request);
    const slot = this.slotOfEntry(tenant, entryId);
    if (!slot.serving) await slot.ready();
    const entry = decide.findEntry(slot.view, tenant, entryId);
    const now = this.now();
    if (entry.closed || !slot.view.isHead(entry) || (entry.lease !== null && entry.lease.expiresAt > now)) return null;
    if (decide.isOverdue(entry, now)) {
      await this.commit(slot, [decide.decideExpire(entry, now)]);
      return null;
    }
    const leased = this.commit(slot, [decide.decideLease(entry, holder, ttlMs, now)]);
    return answerWhenDurable(leased, taken(entry));
  }

  async extend(lease: Lease, ttlMs: number): Promise<Lease> {
    const { slot, checked } = this.leaseCommand(lease);
    const ttlMsChecked = ttl(ttlMs);
    if (!slot.serving) await slot.ready();
    const event = decide.decideExtend(slot.view, checked, ttlMsChecked, this.now());
    const extended = this.commit(slot, [event]);
    // The stored lease, never the caller's copy (whose thread or agent it may have edited).
    return answerWhenDurable(extended, leaseOf(this.entryOf(slot, event.entryId))!);
  }

  async startAttempt(lease: Lease, runId: string): Promise<Attempt> {
    const { slot, checked } = this.leaseCommand(lease);
    const run = requireName('runId', runId);
    if (!slot.serving) await slot.ready();
    const event = decide.decideStartAttempt(slot.view, checked, run, this.now());
    await this.commit(slot, [event]);
    return { runId: event.runId, attempt: event.attempt, epoch: event.epoch, startedAt: event.at };
  }

  async yield(lease: Lease, request: YieldRequest): Promise<boolean> {
    const { slot, checked } = this.leaseCommand(lease);
    const fields = yieldFields(request);
    if (!slot.serving) await slot.ready();
    const event = decide.decideYield(slot.view, checked, fields, this.now());
    if (event === null) return false;
    await this.commit(slot, [event]);
    return true;
  }

  async close(lease: Lease, request: CloseRequest): Promise<Entry> {
    const { slot, checked } = this.leaseCommand(lease);
    const fields = closeFields(request, this.maxInputBytes);
    if (!slot.serving) await slot.ready();
    const event = decide.decideClose(slot.view, checked, fields, this.now());
    const closed = this.commit(slot, [event]);
    return answerWhenDurable(closed, toPublicEntry(this.entryOf(slot, event.entryId)));
  }

  async cancel(tenant: string, entryId: string, reason?: string): Promise<Entry> {
    this.requireRunning();
    const slot = this.slotOfEntry(tenant, entryId);
    const why = optionalText('reason', reason, 64 * 1024);
    if (!slot.serving) await slot.ready();
    const event = decide.decideCancel(slot.view, tenant, entryId, why, this.now());
    const cancelled = this.commit(slot, [event]);
    return answerWhenDurable(cancelled, toPublicEntry(this.entryOf(slot, entryId)));
  }

  async entry(tenant: string, entryId: string): Promise<Entry> {
    this.requireRunning();
    const slot = this.slotOfEntry(tenant, entryId);
    return this.durableRead(slot, () => toPublicEntry(decide.findEntry(slot.view, tenant, entryId)));
  }

  async openEntries(tenant: string, thread: string): Promise<Entry[]> {
    this.requireRunning();
    const slot = this.slotOf(requireName('tenant', tenant), requireName('thread', thread));
    return this.durableRead(slot, () => (slot.view.thread(tenant, thread)?.openEntries() ?? []).map(toPublicEntry));
  }

  async deleteThread(tenant: string, thread: string): Promise<number> {
    this.requireRunning();
    const slot = this.slotOf(requireName('tenant', tenant), requireName('thread', thread));
    if (!slot.serving) await slot.ready();
    const events = decide.decideDeleteThread(slot.view, tenant, thread, this.now());
    if (events.length > 0) await this.commit(slot, events);
    return events.length;
  }

  /** Removes up to `limit` entries closed at least ticketLifetimeMs ago, oldest close first, across partitions. */
  async prune(ticketLifetimeMs: number, limit: number): Promise<number> {
    this.requireRunning();
    requireInteger('ticketLifetimeMs', ticketLifetimeMs, 0);
    requireInteger('limit', limit, 0);
    const closedBy = this.now() - ticketLifetimeMs;
    const due = this.slots
      .flatMap((slot) => slot.view.oldestClosed(limit, (entry) => entry.closedAt! <= closedBy).map((entry) => ({ slot, entry })))
      .sort((a, b) => a.entry.closedAt! - b.entry.closedAt!)
      .slice(0, limit);
    const perSlot = new Map<PartitionSlot, number>();
    for (const { slot } of due) perSlot.set(slot, (perSlot.get(slot) ?? 0) + 1);
    // What each partition pruned (a partition being rebuilt decides once it serves again).
    const pruned = await Promise.all([...perSlot].map(([slot, count]) => this.prunePartition(slot, closedBy, count)));
    return pruned.reduce((a, b) => a + b, 0);
  }

  /** Closes `expired` every open entry whose start deadline passed unstarted; answers how many. */
  async expireOverdue(): Promise<number> {
    this.requireRunning();
    const commits = this.slots.map(async (slot) => {
      if (!slot.serving) await slot.ready();
      const now = this.now();
      const events = slot.view.overdue(now).map((entry) => decide.decideExpire(entry, now));
      if (events.length > 0) await this.commit(slot, events);
      return events.length;
    });
    return (await Promise.all(commits)).reduce((a, b) => a + b, 0);
  }

  /** One retention sweep: expire overdue entries, then prune up to `limit` closed entries past their lifetime. */
  async sweep(retention: Pick<Retention, 'ticketLifetimeMs' | 'limit'>): Promise<{ expired: number; pruned: number }> {
    this.requireRunning();
    const body = requireObject('sweep options', retention, ['ticketLifetimeMs', 'limit']);
    const ticketLifetimeMs = requireInteger('ticketLifetimeMs', body.ticketLifetimeMs, 0);
    const limit = requireInteger('limit', orDefault(body.limit, 10_000), 0);
    // Both decided now, in this turn, like every command: the prune sees the expiries folded.
    const expiring = this.expireOverdue();
    const pruning = this.prune(ticketLifetimeMs, limit);
    const [expired, pruned] = await Promise.all([expiring, pruning]);
    return { expired, pruned };
  }

  /** Runs `sweep` every `everyMs` until stop (the timer does not keep the process alive). */
  startSweeping(retention: Retention): void {
    this.requireRunning();
    const { ticketLifetimeMs, everyMs, limit } = checkRetention(retention);
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
    const slot = this.slotOfEntry(tenant, entryId);
    const entry = slot.view.entries.get(entryId);
    // Open now: wait in this same turn, so its close (folded later) wakes the waiter once durable.
    if (entry !== undefined && entry.tenant === tenant && !entry.closed) return this.waiters.wait(entryId, signal, timeoutMs);
    return this.entry(tenant, entryId);
  }

  nextDueAt(agents: readonly string[]): number | null {
    const names = requireNames('agents', agents);
    let earliest: number | null = null;
    for (const slot of this.slots) {
      const at = slot.view.nextDueAt(names);
      if (at !== null && (earliest === null || at < earliest)) earliest = at;
    }
    return earliest;
  }

  onWork(listener: () => void): () => void {
    if (typeof listener !== 'function') throw invalidArgument(`onWork needs a listener function, got ${describe(listener)}`);
    this.workListeners.add(listener);
    return () => this.workListeners.delete(listener);
  }

  metrics(): QueueMetrics {
    const counters = emptyMetrics();
    for (const slot of this.slots) addMetrics(counters, slot.view.metrics);
    return { ...counters, open: this.openTotal(), warnings: this.warnings.counts() };
  }

  /** Refuses new commands with Stopped, waits for appends in flight, and closes the log. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    clearInterval(this.sweepTimer);
    await Promise.all(this.slots.map((slot) => slot.writer.barrier()));
    for (const slot of this.slots) slot.stop();
    this.waiters.failAll(new RunlogError('Stopped', 'the run queue was stopped'));
    await this.log.close();
  }

  /** The views, for tests and tools comparing them with a replay. */
  views(): readonly PartitionView[] {
    return this.slots.map((slot) => slot.view);
  }

  /**
   * Answers what `read` sees of the view now, once everything folded so far is durable:
   * the view runs ahead of the log by the appends in flight, and nothing is answered
   * before it is durable. A refusal (TicketExpired, ...) waits for durability too.
   */
  private async durableRead<T>(slot: PartitionSlot, read: () => T): Promise<T> {
    for (;;) {
      if (!slot.serving) await slot.ready();
      const writer = slot.writer;
      let value: T | undefined;
      let refusal: unknown;
      try {
        value = read();
      } catch (error) {
        refusal = error;
      }
      await writer.barrier();
      // An append failed: what was read may include its events. Read the rebuilt view.
      if (writer.failed) continue;
      if (refusal !== undefined) throw refusal;
      return value as T;
    }
  }

  /** A failed sweep is retried at the next tick; the failure is a warning (RUNLOG_SWEEP). */
  private reportSweepFailure(error: unknown): void {
    if (error instanceof RunlogError && error.code === 'Stopped') return;
    this.warnings.report({ code: 'RUNLOG_SWEEP', message: `runlog retention sweep failed: ${String(error)}` });
  }

  /** Prunes up to `limit` entries of the partition; answers how many it pruned. */
  private async prunePartition(slot: PartitionSlot, closedBy: number, limit: number): Promise<number> {
    if (!slot.serving) await slot.ready();
    const event = decide.decidePrune(slot.view, closedBy, limit, this.now());
    if (event === null) return 0;
    const tombstones = event.entryIds.flatMap((entryId) => tombstonesOf(this.entryOf(slot, entryId)));
    await this.commit(slot, [event], tombstones);
    return event.entryIds.length;
  }

  /**
   * Encodes, checks the records fit the log, folds, appends durably, then wakes waiters.
   * Encoding and checking first: a bad or oversized event changes nothing. Everything up to
   * the append runs in the caller's turn (the function's first await is the append), so the
   * events are folded when this returns.
   */
  private async commit(slot: PartitionSlot, events: RunlogEvent[], tombstones: AppendRecord[] = []): Promise<void> {
    slot.requireServing();
    const records: AppendRecord[] = events.map((event) => ({ key: recordKeyOf(event), value: encodeEvent(event) }));
    records.push(...tombstones);
    checkRecordsFit(this.log, events, records);
    for (const [i, event] of events.entries()) slot.view.apply(null, records[i]!.key, event);
    // The entries these events close, taken now: one pruned in the same group is gone from the view once durable.
    const closed = this.awaitedClosures(slot, events);
    for (const record of tombstones) slot.view.apply(null, record.key, null);
    const offsets = await slot.writer.write(records);
    slot.view.appended(offsets[offsets.length - 1]!);
    this.afterDurable(events, closed);
  }

  /** The entries closed by `events` that someone awaits (closed entries never change again). */
  private awaitedClosures(slot: PartitionSlot, events: RunlogEvent[]): EntryState[] {
    const closed: EntryState[] = [];
    for (const event of events) {
      if (!isClosing(event) || !this.waiters.has(event.entryId)) continue;
      const entry = slot.view.entries.get(event.entryId);
      if (entry !== undefined) closed.push(entry);
    }
    return closed;
  }

  private afterDurable(events: RunlogEvent[], closed: EntryState[]): void {
    for (const entry of closed) this.waiters.wake(entry.entryId, () => toPublicEntry(entry));
    if (events.some((event) => event.type === 'Submitted' || event.type === 'Yielded' || isClosing(event))) this.notifyWork();
  }

  /**
   * Calls every onWork listener. It runs after a command's events are durable, inside that
   * command: a listener that throws (or, async, rejects) must not turn the command's answer
   * into its error nor end the process, so what it throws becomes a warning (RUNLOG_LISTENER).
   */
  private notifyWork(): void {
    for (const listener of this.workListeners) {
      callListener(listener, [], (error) => {
        this.warnings.report({ code: 'RUNLOG_LISTENER', message: `an onWork listener threw: ${describe(error)}` });
      });
    }
  }

  private bestHead(agents: readonly string[], now: number): [PartitionSlot, EntryState] | undefined {
    let best: [PartitionSlot, EntryState] | undefined;
    for (const slot of this.slots) {
      if (!slot.serving) continue;
      const candidate = slot.view.bestHead(agents, now);
      if (candidate !== undefined && (best === undefined || takesBefore(candidate, best[1]))) best = [slot, candidate];
    }
    return best;
  }

  private leaseCommand(lease: Lease): { slot: PartitionSlot; checked: Lease } {
    this.requireRunning();
    const checked = leaseArgument(lease);
    return { slot: this.slotOfEntry(checked.tenant, checked.entryId), checked };
  }

  private entryOf(slot: PartitionSlot, entryId: string): EntryState {
    return slot.view.entries.get(entryId)!;
  }

  private slotOf(tenant: string, thread: string): PartitionSlot {
    return this.slots[partitionOf(tenant, thread, this.slots.length)]!;
  }

  /** The partition of `tenant`'s entry `entryId` (the tenant is checked here; isolation is the decider's). */
  private slotOfEntry(tenant: string, entryId: string): PartitionSlot {
    requireName('tenant', tenant);
    // Any string is looked up (one that is no ticket id was never issued); anything else is a bad argument.
    if (typeof entryId !== 'string') throw invalidArgument(`entryId must be a string, got ${describe(entryId)}`);
    const parsed = parseEntryId(entryId, this.slots.length);
    if (parsed === null) throw new RunlogError('TicketNotFound', `ticket ${describe(entryId)} was never issued`);
    return this.slots[parsed.partition]!;
  }

  private openOfTenant(tenant: string): number {
    return this.slots.reduce((sum, slot) => sum + (slot.view.openByTenant.get(tenant) ?? 0), 0);
  }

  private openTotal(): number {
    return this.slots.reduce((sum, slot) => sum + slot.view.openCount, 0);
  }

  private requireRunning(): void {
    if (this.stopped) throw new RunlogError('Stopped', 'the run queue was stopped');
  }
}

/** awaitClosed's options: a plain object of an AbortSignal and a timer's timeout, nothing else. */
function awaitOptions(options: unknown): { signal: AbortSignal | undefined; timeoutMs: number | undefined } {
  const body = optionalOptions('awaitClosed options', options, ['signal', 'timeoutMs']);
  return {
    signal: optionalSignal('signal', body.signal),
    timeoutMs: body.timeoutMs === undefined ? undefined : requireTimerMs('timeoutMs', body.timeoutMs, 0),
  };
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

function isClosing(event: RunlogEvent): boolean {
  return event.type === 'Closed' || event.type === 'CancelRequested' || event.type === 'ThreadDeleted';
}

function tombstonesOf(entry: EntryState): AppendRecord[] {
  const keys = [submissionKey(entry.entryId), stateKey(entry.entryId)];
  for (const attempt of entry.attempts) keys.push(attemptKey(entry.entryId, attempt.attempt));
  return keys.map((key) => ({ key, value: null }));
}
