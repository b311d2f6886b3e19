/**
 * The RunQueue: a router over its partitions. It validates a call, builds its command
 * (commands.ts) and routes it to the partition of its (tenant, thread) or ticket, which runs
 * it (partition.ts: decide, commit, answer once durable). It answers what spans partitions:
 * take's choice of the best head, prune's oldest closes first, the capacity counts, metrics,
 * health, nextDueAt; and it runs the retention timer.
 */
import { RunlogError } from '../errors.ts';
import type { ConsumedOffset, EventLog } from '../log/event-log.ts';
import type { RunlogCommand } from '../events/command-types.ts';
import type { CommandAnswered } from '../events/types.ts';
import { answerOptions, requestOf, requestOfRecord, requireCommand, type RequestContext } from './command-requests.ts';
import type { Answering, CloseFields, CommandOf, OpenCounts, SubmissionFields } from './commands.ts';
import { SUCCEEDED_RUN, closeRuns } from './in-process.ts';
import { newRunId } from './run-ids.ts';
import { EntryState } from '../../projections/entry-state.ts';
import type { ClosedEntry } from '../../projections/closed-entry.ts';
import { ClosedEntryCache, DEFAULT_CLOSED_CACHE_BYTES, cachesCloses } from './closed-entries.ts';
import { StartedAnswer, TakenAnswer, answerBytesOf, attemptOf, leaseOf, startedAnswerBytesOf, toPublicEntry } from './public-entry.ts';
import type { PartitionView } from '../../projections/partition-view.ts';
import { findEntry, keyedAnswer, openEntryOf } from './decide.ts';
import { newTicketSecret } from './entry-id.ts';
import { NOTHING_FETCHED, Partition, isReadFirst, type Fetched, type PartitionBatch, type PartitionHost } from './partition.ts';
import type { Ownership } from './queue-options.ts';
import { Partitions } from './partitions.ts';
import {
  awaitOptions,
  closeBatchFields,
  closeFields,
  MAX_ANSWER_BYTES,
  leaseArgument,
  optionalTenants,
  startRequest,
  submitBatchFields,
  submissionFields,
  sweepOptions,
  takeEntryRequest,
  takeRequest,
  ttl,
  yieldFields,
} from './requests.ts';
import { SweepTimer } from './sweep-timer.ts';
import { DEFAULT_SNAPSHOT_SETTINGS, type SnapshotSettings } from './snapshot-keeper.ts';
import { WorkListeners } from './work-listeners.ts';
import { optionalText, requireInteger, requireName, requireNames } from '../validation/index.ts';
import type {
  Attempt,
  AwaitOptions,
  BatchAnswer,
  Capacity,
  CloseRequest,
  Entry,
  Lease,
  LeaseClose,
  LeaseTerms,
  PartitionHealth,
  QueueMetrics,
  RunQueueApi,
  Started,
  StartRequest,
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

/** The open counts of a submission when the capacity limits nothing (none are counted). */
const NO_COUNTS: OpenCounts = Object.freeze({ tenant: 0, total: 0 });

/** A batch's answer to each item: its decision itself (submitBatch builds the ticket from it; one function, not one per item). */
function decisionItself<D>(decision: D): D {
  return decision;
}

export class RunQueue implements RunQueueApi {
  readonly #partitions: Partitions;
  #ownerOf: (partition: number) => string | null = () => null;
  #guard: (() => RunlogError | null) | null = null;
  private readonly workListeners: WorkListeners;
  private stopped = false;
  private readonly sweepTimer: SweepTimer;
  #snapshotTimer: NodeJS.Timeout | undefined;

  constructor(
    readonly log: EventLog,
    /** Per partition its replayed view, or null for a partition not this queue's until acquire(). */
    views: (PartitionView | null)[],
    private readonly clock: StoreClock,
    private readonly capacity: Capacity,
    /** The largest input or result accepted: the maxInputBytes option, or the default that fits the log's records. */
    readonly maxInputBytes: number,
    private readonly warnings: WarningCounter,
    ownership: Ownership = 'all',
    snapshots: SnapshotSettings | null = DEFAULT_SNAPSHOT_SETTINGS,
    closedCacheBytes = DEFAULT_CLOSED_CACHE_BYTES,
  ) {
    this.workListeners = new WorkListeners(warnings.report);
    this.sweepTimer = new SweepTimer(warnings.report);
    if (snapshots !== null && log.snapshots !== undefined) {
      this.#snapshotTimer = setInterval(() => {
        for (const partition of this.#partitions.all) partition.snapshotIfChanged();
      }, snapshots.everyMs);
      this.#snapshotTimer.unref();
    }
    const host: PartitionHost = {
      now: () => this.now(),
      work: () => this.workListeners.notify(),
      warn: warnings.report,
      assigned: ownership === 'assigned',
      clockToleranceMs: this.clock.stepToleranceMs,
      notOwner: (partition) => this.#notOwner(partition),
      snapshots,
      closedCache: new ClosedEntryCache(closedCacheBytes),
      cacheCloses: cachesCloses(log),
    };
    this.#partitions = new Partitions(views.map((view, partition) => new Partition(log, partition, view, host)));
  }

  /**
   * Makes `partition` this queue's (ownership 'assigned'): claims it, fencing its previous
   * writer, replays it and serves it. Resolves once it serves (at once if it does already).
   */
  async acquire(partition: number): Promise<void> {
    if (this.stopped) throw new RunlogError('Stopped', 'the run queue was stopped');
    await this.#partitionNumbered(partition).acquire();
  }

  /** Gives `partition` up (ownership 'assigned'): refuses its commands with NotOwner, settles its appends in flight, drops its view. */
  async release(partition: number): Promise<void> {
    if (this.stopped) return; // stopping released everything
    await this.#partitionNumbered(partition).release();
  }

  /** The partitions this queue serves or is acquiring, in order. */
  owned(): number[] {
    return this.#partitions.all
      .filter((p) => ['serving', 'acquiring', 'draining', 'rebuilding'].includes(p.health().mode))
      .map((p) => p.partition);
  }

  /** Where NotOwner refusals say a partition's owner is (a cluster node's view of its group): its base URL, or null when unknown. */
  setOwnerDirectory(ownerOf: (partition: number) => string | null): void {
    this.#ownerOf = ownerOf;
  }

  /**
   * A check every call makes first: a refusal to throw, or null to go on. A cluster node
   * refuses everything (NotOwner) while its group membership may have lapsed, so a node
   * paused past its session timeout answers nothing from a view others may have moved past.
   */
  setGuard(guard: (() => RunlogError | null) | null): void {
    this.#guard = guard;
  }

  #notOwner(partition: number): RunlogError {
    const owner = this.#ownerOf(partition);
    const where = owner === null ? 'its owner is not known yet (the group is rebalancing)' : `it is served by ${owner}`;
    return new RunlogError('NotOwner', `partition ${partition} is not served by this node: ${where}`, owner === null ? {} : { owner });
  }

  #partitionNumbered(partition: number): Partition {
    return this.#partitions.all[requireInteger('partition', partition, 0, this.#partitions.all.length - 1)]!;
  }

  get partitions(): number {
    return this.#partitions.all.length;
  }

  /**
   * The store clock now (store-clock.ts). A partition acquired from a node whose clock ran ahead
   * runs ahead of it by its lead (partition-lead.ts): times read from such a partition's entries
   * may lie that far beyond this; Partition.toStoreTime brings them back.
   */
  now(): number {
    return this.clock.now();
  }

  /** `partition`'s time now: store time plus its lead (partition-lead.ts), the time its entries' leases and times are in. */
  partitionNow(partition: number): number {
    return this.#partitionNumbered(partition).now();
  }

  async submit(request: SubmitRequest): Promise<Ticket> {
    this.requireRunning();
    const asked = submissionFields(request, this.maxInputBytes);
    const partition = this.#partitions.of(asked.tenant, asked.thread);
    let fetched = NOTHING_FETCHED;
    for (;;) {
      // The clock is read once the partition serves: acquiring it may have raised the clock past its events' times.
      if (!partition.serving) await partition.ready();
      const now = partition.now();
      // notBefore and deadline are by the caller's wall clock: into the partition's time (a no-op unless a clock stepped).
      const fields = this.#timesOf(partition, asked);
      const writer = partition.currentWriter;
      let decision: ReturnType<typeof partition.decide<CommandOf<'Submit'>>>;
      try {
        decision = partition.decide(this.#submitCommand(partition, fields), now, fetched);
      } catch (refusal) {
        await partition.refuseOnceDurable(refusal, writer);
        continue; // an append failed meanwhile: decided again on the rebuilt view
      }
      // Its key may name a closed entry, read from the cache or the log first.
      if (isReadFirst(decision)) {
        fetched = await partition.fetch(decision.entryIds, fetched);
        continue;
      }
      // The entry its key named when it was called, read from the log, pruned meanwhile by a prune called after it:
      // answered as decided before that prune (commands are decided in call order), not created anew.
      const named = decision.kind === 'created' ? keyedAmong(fetched, fields) : undefined;
      if (named !== undefined) {
        const answer = keyedAnswer(named, fields);
        if (answer instanceof RunlogError) throw answer; // SubmissionKeyReused: the work differs
        return { tenant: fields.tenant, thread: fields.thread, entryId: answer.entryId, created: false };
      }
      const created = decision.kind === 'created';
      // An entry its key names may be one whose append is in flight: answered only once that is durable, else decided again.
      if (created) await partition.commit(decision.events);
      else if (!(await partition.durable())) continue;
      return { tenant: fields.tenant, thread: fields.thread, entryId: decision.entryId, created };
    }
  }

  /**
   * Resolves once `partition` serves, with its generation (Partition.generation): a command
   * intake passes it to answerCommand, which then refuses, rather than waits, once the
   * partition stopped serving that view. Rejects as a command would (NotOwner, Stopped, down).
   */
  async awaitServing(partition: number): Promise<number> {
    this.requireRunning();
    const part = this.#partitionNumbered(partition);
    if (!part.serving) await part.ready();
    return part.generation;
  }

  /** A submission's notBefore and deadline, by the caller's wall clock, in `partition`'s time (store-clock.ts rule 5, partition-lead.ts). */
  #timesOf(partition: Partition, asked: SubmissionFields): SubmissionFields {
    if (asked.notBefore === null && asked.deadline === null) return asked; // no time to convert (most submissions)
    const notBefore = partition.fromStoreTime(this.clock.fromWall(asked.notBefore));
    return { ...asked, notBefore, deadline: partition.fromStoreTime(this.clock.fromWall(asked.deadline)) };
  }

  /** The decider's Submit command of checked fields for `partition`: the capacity, the open counts now, a ticket secret if it has none. */
  #submitCommand(partition: Partition, submission: SubmissionFields): CommandOf<'Submit'> {
    const { perTenant, total } = this.capacity;
    // Counted only for a limit the capacity sets (each count visits every partition).
    const counts =
      perTenant === undefined && total === undefined
        ? NO_COUNTS
        : {
            tenant: perTenant === undefined ? 0 : this.#partitions.openOf(submission.tenant),
            total: total === undefined ? 0 : this.#partitions.openTotal(),
          };
    const freshSecret = partition.view.ticketKey === null ? newTicketSecret() : null;
    return { type: 'Submit', submission, capacity: this.capacity, counts, freshSecret };
  }

  /**
   * Answers a command of the commands topic (src/cluster/command-intake.ts), a record's value
   * (or the command decoded), read from commands partition `partition`: the command is decided
   * on that partition and its events and exactly one CommandAnswered are appended together,
   * with `options.consumed` committed in the same append (Kafka only). A repeated request id
   * gets its first answer again; a refusal (a bad command: InvalidArgument, one on the wrong
   * partition, a record that does not decode but names its request id) is an answer too.
   * Resolves with the answer once durable; with null for a record naming no request id at
   * all, skipped with a RUNLOG_COMMAND warning (nothing written, nothing committed). Rejects,
   * with nothing of it written, when the partition does not serve (NotOwner, LogUnavailable,
   * Stopped): decided in the caller's turn when it serves, so calls made one after the other
   * are decided (and land) in call order.
   */
  async answerCommand(
    partition: number,
    command: Uint8Array | null | RunlogCommand,
    options: { consumed?: ConsumedOffset; generation?: number } = {},
  ): Promise<CommandAnswered | null> {
    this.requireRunning();
    const part = this.#partitionNumbered(partition);
    const { consumed, generation } = answerOptions(options);
    requireCommand(command);
    if (generation !== undefined) refuseOtherGeneration(part, generation);
    else if (!part.serving) await part.ready();
    const context: RequestContext = {
      partition,
      partitions: this.partitions,
      maxInputBytes: this.maxInputBytes,
      fromWall: (at) => part.fromStoreTime(this.clock.fromWall(at)),
      submitCommand: (fields) => this.#submitCommand(part, fields),
    };
    const request = command === null || command instanceof Uint8Array ? requestOfRecord(command, context) : requestOf(command, context);
    if ('unreadable' in request) {
      const where = consumed === undefined ? '' : ` at offset ${consumed.offset - 1n} of ${consumed.topic}`;
      this.warnings.report({
        code: 'RUNLOG_COMMAND',
        message: `skipped a command record of partition ${partition}${where}: ${request.unreadable}`,
      });
      return null;
    }
    const decision = await decideInOrder(part, { type: 'Answer', ...request }, () => part.now());
    await part.commit(decision.events, consumed === undefined ? {} : { consumed });
    return decision.answer;
  }

  /**
   * Leases the best head for `agents` (of `tenants`, when given) across partitions. Overdue heads it comes across are
   * expired on the way, each a command of its own (Partition.expireAside): the answer hangs
   * on the lease alone, so a lease is never left behind that the caller did not get.
   */
  async take(request: TakeRequest): Promise<Taken | null> {
    this.requireRunning();
    const { agents, tenants, holder, ttlMs } = takeRequest(request);
    const now = this.#partitions.times();
    const expiries: Promise<void>[] = [];
    for (;;) {
      const best = this.#partitions.bestHead(agents, now, tenants);
      if (best === undefined) break;
      const [partition, entry] = best;
      const decision = partition.decide({ type: 'Lease', entryId: entry.entryId, holder, ttlMs, agents, tenants }, now(partition));
      // The index offers only heads decide finds takeable: unchanged would be a bug, and take would loop.
      if (decision.kind === 'unchanged') throw new Error(`the head index offered entry ${entry.entryId}, which is not takeable`);
      if (decision.kind === 'expired') {
        expiries.push(partition.expireAside(decision.events));
        continue;
      }
      const leased = partition.commit(decision.events);
      const answer = new TakenAnswer(entry); // built now, in the decision's turn: later commands may change the entry
      await Promise.all([...expiries, leased]);
      return answer;
    }
    // "Nothing to take" may rest on appends in flight (a lease): answered once they are durable, taken again if one failed.
    const settled = this.#partitions.settledWithoutFailure();
    await Promise.all(expiries);
    const down = this.#partitions.allDown();
    if (down !== null) throw down; // not "nothing to take": nothing ever will be
    return (await settled) ? null : this.take(request);
  }

  /**
   * Leases and starts up to `max` heads, each as take chooses it (the best first), each a
   * LeaseStart command decided and folded before the next is chosen, added to one batch per
   * partition (Partition.batch): one write to the group commit per partition, not one per
   * entry. Overdue heads met on the way are expired in the same batch. Answered once every
   * lease and attempt is durable. It stops before the entry that would take the answer past
   * MAX_ANSWER_BYTES (answerBytesOf; the first is always taken): fewer than `max`, as when fewer wait.
   */
  async takeStarted(request: StartRequest): Promise<Started[]> {
    this.requireRunning();
    const { agents, tenants, holder, ttlMs, max, attemptCap } = startRequest(request);
    const now = this.#partitions.times();
    const batches = new Map<Partition, PartitionBatch>();
    const started: Started[] = [];
    /** The partition of each entry started. */
    const startedOn: Partition[] = [];
    let answerBytes = 0;
    while (started.length < max) {
      const best = this.#partitions.bestHead(agents, now, tenants);
      if (best === undefined) break;
      const [partition, entry] = best;
      answerBytes += startedAnswerBytesOf(entry, holder);
      if (answerBytes > MAX_ANSWER_BYTES && started.length > 0) break;
      let batch = batches.get(partition);
      if (batch === undefined) batches.set(partition, (batch = partition.batch(NOTHING_FETCHED, now(partition))));
      const command = {
        type: 'LeaseStart',
        entryId: entry.entryId,
        holder,
        ttlMs,
        agents,
        tenants,
        runId: newRunId(),
        attemptCap,
      } as const;
      const answer = batch.add(command, (decision) => {
        // The index offers only heads decide finds takeable (a drawn run id is never in use): unchanged would loop.
        if (decision.kind === 'unchanged') throw new Error(`the head index offered entry ${entry.entryId}, which is not takeable`);
        // Built now, in the decision's turn: later commands may change the entry.
        if (decision.kind === 'expired') return;
        started.push(new StartedAnswer(entry, decision.kind === 'started' ? attemptOf(decision.events[1]) : null));
        startedOn.push(partition);
      });
      if (answer instanceof RunlogError) throw answer; // a LeaseStart of an offered head is never refused: a bug
    }
    const settled = started.length === 0 ? this.#partitions.settledWithoutFailure() : null;
    const failed = await commitEach(batches);
    if (settled !== null) {
      const down = this.#partitions.allDown();
      if (down !== null) throw down; // as take
      if (!(await settled)) return this.takeStarted(request); // as take
    }
    // A partition whose append failed started nothing it can answer; the others' leases and attempts are durable: theirs.
    return failed.size === 0 ? started : started.filter((_, i) => !failed.has(startedOn[i]!));
  }

  /**
   * Submits every request (checked whole first: nothing is written if one is malformed),
   * decided in order (capacity and keys see the items before), one append per partition
   * (Partition.batch). An item's refusal is its answer.
   */
  async submitBatch(requests: readonly SubmitRequest[]): Promise<BatchAnswer<'ticket', Ticket>[]> {
    this.requireRunning();
    const items = submitBatchFields(requests, this.maxInputBytes);
    const partitions = items.map((asked) => this.#partitions.of(asked.tenant, asked.thread));
    // Closed entries the items' keys may name, read first (cache or log): the items are then decided in one turn.
    const fetched = new Map<Partition, Fetched>();
    if (items.some((asked) => asked.key !== null)) {
      for (const partition of new Set(partitions)) {
        fetched.set(partition, await partition.closedEntriesForKeys(items.filter((_, i) => partitions[i] === partition)));
      }
    }
    const batches = await this.#batches(partitions, fetched);
    let existing = false;
    const answers: BatchAnswer<'ticket', Ticket>[] = new Array(items.length);
    for (let i = 0; i < items.length; i++) {
      const asked = items[i]!;
      const partition = partitions[i]!;
      // The closed entry its key named when the batch was called, read first: answered even if a prune called after the
      // batch removed it meanwhile (commands are decided in call order, as submit answers it).
      const named = keyedAmong(fetched.get(partition) ?? NOTHING_FETCHED, asked);
      if (named !== undefined && partition.view.closedTicket(named.entryId) === undefined) {
        const answer = keyedAnswer(named, asked);
        answers[i] =
          answer instanceof RunlogError
            ? { error: answer }
            : { ticket: { tenant: asked.tenant, thread: asked.thread, entryId: answer.entryId, created: false } };
        continue;
      }
      // notBefore and deadline are by the caller's wall clock: into the partition's time, as submit does.
      const decision = batches.get(partition)!.add(this.#submitCommand(partition, this.#timesOf(partition, asked)), decisionItself);
      if (decision instanceof RunlogError) {
        answers[i] = { error: decision };
        continue;
      }
      existing ||= decision.kind === 'existing';
      answers[i] = {
        ticket: { tenant: asked.tenant, thread: asked.thread, entryId: decision.entryId, created: decision.kind === 'created' },
      };
    }
    const failed = await commitEach(batches);
    // An entry a key names may be one whose append was in flight: answered only once that is durable.
    if (existing) await this.#allDurable(new Set(partitions));
    // A refusal stays the item's answer (nothing of it was to be written); a ticket of a failed append is not one.
    if (failed.size === 0) return answers;
    return answers.map((answer, i) => ('error' in answer ? answer : (refusedWith(failed, partitions[i]!) ?? answer)));
  }

  /** A batch on each of `partitions`, opened once all of them serve (so that the items are then decided in one turn, in order). */
  async #batches(partitions: readonly Partition[], fetched = new Map<Partition, Fetched>()): Promise<Map<Partition, PartitionBatch>> {
    const distinct = [...new Set(partitions)];
    while (!distinct.every((partition) => partition.serving)) {
      await Promise.all(distinct.map((partition) => (partition.serving ? undefined : partition.ready())));
    }
    return new Map(distinct.map((partition) => [partition, partition.batch(fetched.get(partition))]));
  }

  async #allDurable(partitions: Set<Partition>): Promise<void> {
    for (const partition of partitions) {
      if (await partition.durable()) continue;
      const message = `an append in flight on partition ${partition.partition} failed, which an item's key may name: submit the batch again (its keyed items answer the same tickets)`;
      throw new RunlogError('LogUnavailable', message, { retriable: true });
    }
  }

  async takeEntry(tenant: string, entryId: string, request: LeaseTerms): Promise<Taken | null> {
    this.requireRunning();
    const { holder, ttlMs } = takeEntryRequest(request);
    const partition = this.#partitions.ofEntry(tenant, entryId);
    const command = { type: 'LeaseEntry', tenant, entryId, holder, ttlMs } as const;
    return partition.run(command, (decision) =>
      decision.kind === 'leased' ? new TakenAnswer(partition.view.entries.get(entryId)!) : null,
    );
  }

  async extend(lease: Lease, ttlMs: number): Promise<Lease> {
    const { partition, checked } = this.leaseCommand(lease);
    // The stored lease, never the caller's copy (whose thread or agent it may have edited).
    return partition.run({ type: 'Extend', lease: checked, ttlMs: ttl(ttlMs) }, ({ events: [event] }) => {
      return leaseOf(partition.view.entries.get(event.entryId)!)!;
    });
  }

  async startAttempt(lease: Lease, runId: string): Promise<Attempt> {
    const { partition, checked } = this.leaseCommand(lease);
    return partition.run({ type: 'StartAttempt', lease: checked, runId: requireName('runId', runId) }, ({ events: [event] }) =>
      attemptOf(event),
    );
  }

  async yield(lease: Lease, request: YieldRequest): Promise<boolean> {
    const { partition, checked } = this.leaseCommand(lease);
    return partition.run({ type: 'Yield', lease: checked, request: yieldFields(request) }, (decision) => decision.kind !== 'unchanged');
  }

  async close(lease: Lease, request: CloseRequest): Promise<Entry> {
    const { partition, checked } = this.leaseCommand(lease);
    const command = { type: 'Close', lease: checked, request: closeFields(request, this.maxInputBytes) } as const;
    return partition.run(command, ({ events: [event] }) => closedAnswer(partition, event.entryId));
  }

  /**
   * Closes every item (checked whole first) as close does, in order, one append per partition;
   * an item's refusal is its answer (an entry id of no partition of this queue too, as close
   * refuses it). A batch whose answer could take more than MAX_ANSWER_BYTES (requireAnswerFits)
   * is refused whole before anything is decided: close it in smaller batches.
   */
  async closeBatch(closes: readonly LeaseClose[]): Promise<BatchAnswer<'entry', Entry>[]> {
    this.requireRunning();
    const items = closeBatchFields(closes, this.maxInputBytes);
    const partitions = items.map(({ lease }) => this.#partitionOrRefusal(lease));
    requireAnswerFits(items, partitions);
    const batches = await this.#batches(partitions.filter((p): p is Partition => p instanceof Partition));
    const answers = items.map((close, i): BatchAnswer<'entry', Entry> => {
      const partition = partitions[i]!;
      if (partition instanceof RunlogError) return { error: partition };
      const answer = batches
        .get(partition)!
        .add({ type: 'Close', ...close }, ({ events: [event] }) => closedAnswer(partition, event.entryId));
      return answer instanceof RunlogError ? { error: answer } : { entry: answer };
    });
    const failed = await commitEach(batches);
    if (failed.size === 0) return answers;
    return answers.map((answer, i) => {
      const partition = partitions[i]!;
      return 'error' in answer || !(partition instanceof Partition) ? answer : (refusedWith(failed, partition) ?? answer);
    });
  }

  /** The partition of a lease's entry, or the refusal close would answer for it (TicketNotFound). */
  #partitionOrRefusal(lease: Lease): Partition | RunlogError {
    try {
      return this.#partitions.ofEntry(lease.tenant, lease.entryId);
    } catch (error) {
      if (error instanceof RunlogError) return error;
      throw error;
    }
  }

  /**
   * The in-process Worker's closes (in-process.ts): as closeBatch, for leases a take of this
   * queue answered (so not read as unknown arguments: decide still judges each against the
   * view), answering each item's refusal or null, no entry built. The requests are checked as
   * close checks them, but for the Worker's usual one (SUCCEEDED_RUN: checked once).
   */
  async [closeRuns](closes: readonly LeaseClose[]): Promise<(RunlogError | null)[]> {
    this.requireRunning();
    const requests = closes.map(({ request }) => (request === SUCCEEDED_RUN ? SUCCEEDED : closeFields(request, this.maxInputBytes)));
    const partitions = closes.map(({ lease }) => this.#partitions.ofIssued(lease.entryId));
    const batches = await this.#batches(partitions);
    const answers = closes.map(({ lease }, i) =>
      batches.get(partitions[i]!)!.add({ type: 'Close', lease, request: requests[i]! }, noAnswer),
    );
    const failed = await commitEach(batches);
    return failed.size === 0 ? answers : answers.map((answer, i) => answer ?? failed.get(partitions[i]!) ?? null);
  }

  async cancel(tenant: string, entryId: string, reason?: string): Promise<Entry> {
    this.requireRunning();
    const partition = this.#partitions.ofEntry(tenant, entryId);
    const command = { type: 'Cancel', tenant, entryId, reason: optionalText('reason', reason, 64 * 1024) } as const;
    return partition.run(command, () => closedAnswer(partition, entryId));
  }

  async entry(tenant: string, entryId: string): Promise<Entry> {
    this.requireRunning();
    const partition = this.#partitions.ofEntry(tenant, entryId);
    return partition.durableRead(() => {
      const found = findEntry(partition.view, tenant, entryId);
      // A closed one is whole in the view until durable, then in the cache or the log.
      return found instanceof EntryState ? toPublicEntry(found) : partition.closedEntry(found).then(toPublicEntry);
    });
  }

  async openEntries(tenant: string, thread: string): Promise<Entry[]> {
    this.requireRunning();
    const partition = this.#partitions.of(requireName('tenant', tenant), requireName('thread', thread));
    return partition.durableRead(() => (partition.view.thread(tenant, thread)?.openEntries() ?? []).map(toPublicEntry));
  }

  async deleteThread(tenant: string, thread: string): Promise<number> {
    this.requireRunning();
    const partition = this.#partitions.of(requireName('tenant', tenant), requireName('thread', thread));
    return partition.run({ type: 'DeleteThread', tenant, thread }, ({ events }) => events.length);
  }

  /** Removes up to `limit` entries closed at least ticketLifetimeMs ago, oldest close first, across partitions. */
  async prune(ticketLifetimeMs: number, limit: number): Promise<number> {
    this.requireRunning();
    requireInteger('ticketLifetimeMs', ticketLifetimeMs, 0);
    requireInteger('limit', limit, 0);
    return this.#partitions.prune(ticketLifetimeMs, limit);
  }

  /** Closes `expired` every open entry whose start deadline passed unstarted; answers how many. */
  async expireOverdue(): Promise<number> {
    this.requireRunning();
    return this.#partitions.expireOverdue();
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
    this.sweepTimer.start(everyMs, () => this.sweep({ ticketLifetimeMs, limit }));
  }

  /** The closed entry, once its close is durable; null when timeoutMs passes first; rejects when signal aborts. */
  async awaitClosed(tenant: string, entryId: string, options: AwaitOptions = {}): Promise<Entry | null> {
    this.requireRunning();
    const { signal, timeoutMs } = awaitOptions(options);
    const partition = this.#partitions.ofEntry(tenant, entryId);
    // Not serving (being acquired, say), its view may not hold the entry yet: an open entry would be answered as it is.
    if (!partition.serving) await partition.ready();
    // Open now: wait in this same turn, so its close (folded later) wakes the waiter once durable.
    if (openEntryOf(partition.view, tenant, entryId) !== undefined) return partition.awaitClose(entryId, signal, timeoutMs);
    return this.entry(tenant, entryId);
  }

  async nextDueAt(agents: readonly string[], tenants?: readonly string[]): Promise<number | null> {
    return this.#partitions.nextDueAt(requireNames('agents', agents), optionalTenants(tenants));
  }

  onWork(listener: () => void): () => void {
    return this.workListeners.add(listener);
  }

  async metrics(): Promise<QueueMetrics> {
    return { ...this.#partitions.counters(), open: this.#partitions.openTotal(), warnings: this.warnings.counts() };
  }

  async health(): Promise<PartitionHealth[]> {
    return this.#partitions.all.map((partition) => partition.health());
  }

  /** Refuses new commands with Stopped, waits for appends in flight, snapshots each view it serves (if changed), and closes the log. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.sweepTimer.stop();
    clearInterval(this.#snapshotTimer);
    await Promise.all(this.#partitions.all.map((partition) => partition.barrier()));
    await Promise.all(this.#partitions.all.map((partition) => partition.snapshotOnStop()));
    for (const partition of this.#partitions.all) partition.stop();
    await this.log.close();
  }

  /** The views, for tests and tools comparing them with a replay. */
  views(): readonly PartitionView[] {
    return this.#partitions.all.map((partition) => partition.view);
  }

  private leaseCommand(lease: Lease): { partition: Partition; checked: Lease } {
    this.requireRunning();
    const checked = leaseArgument(lease);
    return { partition: this.#partitions.ofEntry(checked.tenant, checked.entryId), checked };
  }

  private requireRunning(): void {
    if (this.stopped) throw new RunlogError('Stopped', 'the run queue was stopped');
    const refusal = this.#guard?.();
    if (refusal) throw refusal;
  }
}

/**
 * Commands read in order from a commands partition must land in that order: one arriving once
 * the partition left the view its predecessors were decided on (an append failed: they are
 * lost and will be read again from the committed offset) is refused, never decided later.
 */
function refuseOtherGeneration(partition: Partition, generation: number): void {
  if (partition.serving && partition.generation === generation) return;
  const why = partition.serving ? `it serves a newer view (generation ${partition.generation})` : 'it is not serving';
  throw new RunlogError(
    'LogUnavailable',
    `partition ${partition.partition} no longer serves generation ${generation} of its view: ${why}; read the commands again from the committed offset`,
    { retriable: true },
  );
}

/**
 * Decides an Answer so that answers land in call order (a command intake commits each one's
 * consumed offset with it): decided in the caller's turn, unless it must read closed entries
 * first (a submission key naming one); then the answers called after it wait for it to decide.
 */
async function decideInOrder(part: Partition, command: CommandOf<'Answer'>, now: () => number): Promise<Answering> {
  while (part.answersHeld !== null) await part.answersHeld;
  let decision = part.decide(command, now());
  if (!isReadFirst(decision)) return decision;
  let release!: () => void;
  part.answersHeld = new Promise<void>((resolve) => (release = resolve));
  try {
    let fetched: Fetched = new Map();
    while (isReadFirst(decision)) {
      fetched = await part.fetch(decision.entryIds, fetched);
      if (!part.serving) await part.ready();
      decision = part.decide(command, now(), fetched);
    }
    return decision;
  } finally {
    part.answersHeld = null;
    release();
  }
}

/**
 * What close and cancel answer: the entry their event just closed, held whole by the view
 * until durable (still open only when the commit was refused before folding: the answer
 * is then dropped for the refusal).
 */
function closedAnswer(partition: Partition, entryId: string): Entry {
  return toPublicEntry(partition.view.unsettledEntry(entryId) ?? partition.view.entries.get(entryId)!);
}

/** The entry among `fetched` that `submission`'s key names on its thread, if any. */
function keyedAmong(fetched: Fetched, submission: SubmissionFields): ClosedEntry | undefined {
  if (submission.key === null) return undefined;
  for (const entry of fetched.values())
    if (entry.tenant === submission.tenant && entry.thread === submission.thread && entry.key === submission.key) return entry;
  return undefined;
}

/** SUCCEEDED_RUN's fields. */
const SUCCEEDED: CloseFields = Object.freeze({ outcome: 'succeeded', result: null, error: null });

function noAnswer(): null {
  return null;
}

/** No partition's append failed: what commitEach answers for one batch, the usual case (no arrays, no Promise.allSettled). */
const NO_FAILURES: ReadonlyMap<Partition, RunlogError> = new Map();

/**
 * Commits each partition's batch on its own, and answers the partitions whose append failed
 * with why. A batch spans partitions, each with an append of its own: one that fails (its log
 * down, its writer fenced) does not undo the others, durable by then, so their items are
 * answered as done and the failed one's items its failure (the Kafka tester: a takeStarted
 * rejected whole left the leases and attempts of the partitions that were written to run out,
 * each attempt spent). When every partition failed it rejects, as one append's failure does.
 */
async function commitEach(batches: ReadonlyMap<Partition, PartitionBatch>): Promise<ReadonlyMap<Partition, RunlogError>> {
  if (batches.size <= 1) {
    for (const batch of batches.values()) await batch.commit();
    return NO_FAILURES;
  }
  const partitions = [...batches.keys()];
  const settled = await Promise.allSettled(partitions.map((partition) => batches.get(partition)!.commit()));
  const failed = new Map<Partition, RunlogError>();
  settled.forEach((result, i) => {
    if (result.status === 'fulfilled') return;
    if (!(result.reason instanceof RunlogError)) throw result.reason;
    failed.set(partitions[i]!, result.reason);
  });
  if (failed.size === partitions.length) throw failed.values().next().value;
  return failed;
}

/** A batch item's answer when its partition's append failed (commitEach), or null. */
function refusedWith(failed: ReadonlyMap<Partition, RunlogError>, partition: Partition): { error: RunlogError } | null {
  const error = failed.get(partition);
  return error === undefined ? null : { error };
}

/** A refusal's answer at most: its problem body (a message of a few names and values). */
const REFUSAL_ANSWER_BYTES = 1024;

/**
 * Refuses a closeBatch whose answer could take more than MAX_ANSWER_BYTES: each item's entry,
 * open in the view now, closed with the item's result (answerBytesOf: an upper bound, and what
 * it counts of an entry never grows but for its lease holder, counted here too); an item whose
 * entry is closed or unknown by then is answered a refusal.
 */
function requireAnswerFits(
  items: readonly { lease: Lease; request: CloseFields }[],
  partitions: readonly (Partition | RunlogError)[],
): void {
  let bytes = 0;
  items.forEach(({ lease, request }, i) => {
    const partition = partitions[i]!;
    const open = partition instanceof Partition ? partition.view.entries.get(lease.entryId) : undefined;
    bytes += open === undefined ? REFUSAL_ANSWER_BYTES : answerBytesOf(open, request.result?.length ?? 0, request.error?.length ?? 0);
  });
  if (bytes > MAX_ANSWER_BYTES) {
    const message = `closes: the answer would take up to ${bytes} bytes (the closed entries, their inputs and results), more than the ${MAX_ANSWER_BYTES} one answer carries: close them in smaller batches`;
    throw new RunlogError('InvalidArgument', message);
  }
}
