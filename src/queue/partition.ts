/**
 * One partition of a RunQueue: its view (the fold of its log), its group commit, and one
 * mode saying whether it serves commands. It runs commands (decide, commit, answer once
 * durable), answers durable reads, and rebuilds its view after a failed append.
 *
 * (Over the ~300-line guide on purpose: the mode, the rebuild that changes it and the commit
 * path that reads it share the view and the group commit; split, each half would reach into
 * the other's state.)
 *
 *   serving ──an append fails──▶ draining ──the appends in flight settled──▶ rebuilding
 *   rebuilding ──claim + replay succeed──▶ serving
 *   rebuilding ──claim or replay fails, retriably (the log is unreachable)──▶ rebuilding, after a pause
 *   draining / rebuilding ──a final failure──▶ down, for good
 *   any ──the queue stops──▶ stopped
 *
 * A queue whose partitions are assigned to it (ownership 'assigned': a node of a cluster,
 * src/cluster) has three more modes, and there Fenced is not final but a loss of ownership:
 *
 *   unowned ──acquire()──▶ acquiring ──claim + replay succeed──▶ serving
 *   acquiring ──claim or replay fails──▶ unowned (acquire() rejects)
 *   serving / draining / rebuilding / down ──release()──▶ releasing ──the appends in flight settled──▶ unowned
 *   draining / rebuilding ──Fenced (another node claimed the partition)──▶ releasing ──▶ unowned
 *
 * Commands meeting unowned or releasing fail at once with NotOwner (retriable; naming the
 * owner's URL when the queue's owner directory knows it). Commands meeting acquiring wait
 * for it, as for a rebuild. acquire() and release() of one partition run one after the other.
 *
 * A final failure is Fenced or Locked (another writer owns the partition now), or a rebuild
 * failing with an error that is not retriable (Corrupt: the log is damaged; retrying cannot
 * help). Every failed rebuild attempt and every fall to down is a warning
 * (RUNLOG_PARTITION_DOWN); health() says the mode and, when not serving, why.
 *
 * The partition stops serving the moment an append fails (the view then holds events the
 * log may not), not only once the failure is reported. A command that finds it not serving
 * waits (ready()) for the end of the next rebuild attempt, then decides against the rebuilt
 * view; if that attempt failed, the command fails with the attempt's error (a retriable
 * LogUnavailable saying why), and once down, with the error it is down for. A command's own
 * refusal or failure is never handed to the next one: only commands whose events were in or
 * behind the failed append share its error (their events were folded into the view the
 * failure discarded).
 *
 * The rebuild claims the partition first (EventLog.claim: on Kafka it checks this process
 * still owns the partition, fencing nobody if not) and then replays it, so the replay sees
 * everything any earlier writer had acknowledged.
 */
import { RunlogError, invalidArgument, isRunlogError } from '../errors.ts';
import type { Closed, RunlogEvent } from '../events/types.ts';
import { appendBytes, type AppendRecord, type ConsumedOffset, type EventLog } from '../log/event-log.ts';
import { openView } from '../projector/snapshots.ts';
import { PartitionView } from '../../projections/partition-view.ts';
import type { RunlogWarning } from '../warnings.ts';
import { Backoff } from '../retry.ts';
import { ClosedWaiters } from './closed-waiters.ts';
import type { Command, Decision, DecisionOf, ReadFirst, Refused } from './commands.ts';
import { decide, expiredTicket, wakesWorkers, type ClosedReader } from './decide.ts';
import { readClosedEntry, type ClosedEntryCache } from './closed-entries.ts';
import type { ClosedEntry } from '../../projections/closed-entry.ts';
import type { ClosedTicket } from '../../projections/closed-tickets.ts';
import { GroupCommit, offsetsOf, type Written } from './group-commit.ts';
import { checkRecordsFit } from './record-bounds.ts';
import { recordsOf } from './records.ts';
import { PartitionLead } from './partition-lead.ts';
import { SnapshotKeeper, type SnapshotSettings } from './snapshot-keeper.ts';
import type { Entry, PartitionHealth } from './types.ts';

/** The pauses between attempts to rebuild a partition whose log could not be read (src/retry.ts adds jitter). */
const REBUILD_BACKOFF = { firstMs: 50, maxMs: 5_000 };

type Mode =
  | { kind: 'serving' }
  | { kind: 'draining' }
  | { kind: 'rebuilding'; error: RunlogError | null }
  | { kind: 'down'; error: RunlogError }
  | { kind: 'stopped'; error: RunlogError }
  | { kind: 'acquiring' }
  | { kind: 'releasing' }
  | { kind: 'unowned' };

export interface CommitOptions {
  tombstones?: readonly string[];
  consumed?: ConsumedOffset;
}

/** A command's events folded into the view: its records to append, and the entries it closed that someone awaits. */
interface Folded {
  records: AppendRecord[];
  closed: readonly ClosedEntry[];
  /** The events' records' size as appendBytes counts it (checkRecordsFit measured it; the snapshot policy counts it). */
  bytes: number;
  /** Every record's size as appendBytes counts it, a prune's tombstones included: what the group commit is handed. */
  appendBytes: number;
}

/** Commands decided and folded one by one, then appended together (Partition.batch). */
export interface PartitionBatch {
  add<C extends Command, A>(command: C, answer: (decision: Accepted<C>) => A): A | RunlogError;
  commit(): Promise<void>;
}

/** What a command decided, when it was not refused (a refusal is thrown) and needed no read first. */
export type Accepted<C extends Command> = Exclude<DecisionOf<C['type']>, Refused | ReadFirst>;

/** ReadFirst, for the commands that may decide it (Submit, StartAttempt, Answer). */
export type MayReadFirst<C extends Command> = Extract<DecisionOf<C['type']>, ReadFirst>;

/** Closed entries a command had read for it (Partition.fetch), by entry id. */
export type Fetched = ReadonlyMap<string, ClosedEntry>;
export const NOTHING_FETCHED: Fetched = new Map();

/** A batch item whose key names closed entries not at hand: retriable (they closed while the batch read the others). */
function notAtHand(entryIds: readonly string[]): RunlogError {
  const message = `the submission key names closed entries (${entryIds.join(', ')}) that closed while the batch was read: submit it again`;
  return new RunlogError('LogUnavailable', message, { retriable: true });
}

/** Whether a decision asks for closed entries to be read first (decide.ts, ReadFirst). */
export function isReadFirst(decision: { kind: string }): decision is ReadFirst {
  return decision.kind === 'read';
}

/** What a partition needs of its queue. */
export interface PartitionHost {
  /** The store clock (the partition's time is it plus the partition's lead: partition-lead.ts). */
  now(): number;
  /** Wakes the queue's onWork listeners: work may be takeable (after a commit, or serving again). */
  work(): void;
  warn(warning: RunlogWarning): void;
  /** Whether partitions are assigned to this queue (a cluster node): Fenced then releases the partition instead of downing it. */
  readonly assigned: boolean;
  /** A lead of the partition's time over the store clock larger than this (ms) is reported as a clock step. */
  readonly clockToleranceMs: number;
  /** The NotOwner refusal of `partition`, naming its owner when known. */
  notOwner(partition: number): RunlogError;
  /** When views are snapshotted (null: never). */
  readonly snapshots: SnapshotSettings | null;
  /** The queue's cache of closed entries whole (closed-entries.ts). */
  readonly closedCache: ClosedEntryCache;
  /** Whether closes go into the cache as they become durable, or only entries read back (closed-entries.ts: CACHED AS WHAT). */
  readonly cacheCloses: boolean;
}

/** What refuseOnceDurable needs of a writer: when what it committed so far is durable, and whether it failed. */
export interface DurabilityOf {
  barrier(): Promise<void>;
  readonly failed: boolean;
}

export class Partition {
  #view: PartitionView;
  #writer: GroupCommit;
  #mode: Mode;
  #generation = 0;
  /** The last acquire() or release() of the partition: the next one starts once it has ended. */
  #ownershipChange: Promise<void> = Promise.resolve();
  readonly #closes = new ClosedWaiters();
  readonly #snapshots: SnapshotKeeper;
  /** How far this partition's time runs ahead of the store clock (partition-lead.ts). */
  readonly #lead = new PartitionLead();
  /** The view's next offset when this queue last released the partition (null: not since it last served). */
  #releasedAt: bigint | null = null;
  /** A wake of the onWork listeners is queued (#wakeSoon). */
  #wakeQueued = false;
  /** Commits whose append has not completed: a snapshot waits for none (snapshot-keeper.ts). */
  #inFlight = 0;
  /** Who waits for nothing in flight (snapshotOnStop): woken when #inFlight drops to 0. */
  #idle: (() => void)[] = [];
  /** Commands waiting for the end of the next rebuild attempt: null once it succeeded, else why not. */
  #rebuildWaiters: Array<(failure: RunlogError | null) => void> = [];
  /** Ends the pause between rebuild attempts when the queue stops (the pause keeps the process alive: commands may wait). */
  readonly #stopping = new AbortController();
  /**
   * The rebuilds begun: a rebuild goes on only while it is the latest. A partition released
   * during a rebuild and acquired again may rebuild anew while the old one's claim or replay is
   * still under way; served, that older replay would lack what was acknowledged since.
   */
  #rebuildsBegun = 0;
  /** Set while an answer of the commands topic reads closed entries before deciding: later answers wait (run-queue.ts, decideInOrder). */
  answersHeld: Promise<void> | null = null;

  constructor(
    private readonly log: EventLog,
    readonly partition: number,
    view: PartitionView | null,
    private readonly host: PartitionHost,
  ) {
    // No view: the partition is not this queue's until acquire() (ownership 'assigned').
    this.#mode = view === null ? { kind: 'unowned' } : { kind: 'serving' };
    this.#view = view ?? new PartitionView(partition);
    this.#writer = this.#newWriter();
    this.#snapshots = new SnapshotKeeper(log, partition, host.snapshots, host.warn);
    // Served from open (ownership 'all'): its time starts at its own latest event, as an acquired one's.
    if (view !== null) this.#followTimes(view.lastAt, true);
  }

  /** The fold of the partition's log, ahead of it by the appends in flight. */
  get view(): PartitionView {
    return this.#view;
  }

  /** Whether commands may decide against the view now. */
  get serving(): boolean {
    return this.#mode.kind === 'serving';
  }

  /** Whether the partition is not this queue's (ownership 'assigned'): unowned, or being released. */
  get unowned(): boolean {
    return this.#is('unowned') || this.#is('releasing');
  }

  /**
   * Counts the views the partition has served from: one more each time it serves again after
   * a rebuild or an acquire. A command intake reads from the committed offset for one
   * generation, and its commands are refused once another began (command-intake.ts).
   */
  get generation(): number {
    return this.#generation;
  }

  health(): PartitionHealth {
    const mode = this.#mode;
    const error = mode.kind === 'down' || mode.kind === 'rebuilding' ? mode.error : null;
    return error === null ? { partition: this.partition, mode: mode.kind } : { partition: this.partition, mode: mode.kind, error };
  }

  /** Resolves once the partition serves; rejects with why it is down or stopped, or why the next rebuild attempt failed. */
  async ready(): Promise<void> {
    while (!this.serving) {
      const refusal = this.#refusal();
      if (refusal !== null) throw refusal;
      const failure = await new Promise<RunlogError | null>((resolve) => this.#rebuildWaiters.push(resolve));
      if (failure !== null) throw failure;
    }
  }

  /**
   * Runs `command`: once the partition serves, decides it against the view at the store
   * clock (decide.ts), commits its events, and answers what `answer` builds from the
   * decision. The answer is built in the decision's turn, right after its events are folded,
   * and handed over once they are durable: later commands may change the entry meanwhile,
   * and the caller gets what was made durable for it. A refusal is thrown. A decision that
   * appends nothing (a refusal, or unchanged: deleteThread of a thread whose entries a cancel in
   * flight closes) is answered once the appends in flight are durable, and decided again if one
   * failed: it may rest on them (DESIGN invariant 7).
   */
  async run<C extends Command, A>(command: C, answer: (decision: Accepted<C>) => A): Promise<A> {
    let fetched = NOTHING_FETCHED;
    for (;;) {
      if (!this.serving) await this.ready();
      const writer = this.#writer;
      let decision: Accepted<C> | MayReadFirst<C>;
      try {
        decision = this.decide(command, this.now(), fetched);
      } catch (refusal) {
        await this.refuseOnceDurable(refusal, writer);
        continue; // an append failed meanwhile: decided again on the rebuilt view
      }
      if (isReadFirst(decision)) {
        fetched = await this.fetch(decision.entryIds, fetched);
        continue;
      }
      if (decision.events.length === 0) {
        const unchanged = answer(decision);
        if (await this.durable(writer)) return unchanged;
        continue; // as a refusal
      }
      const tombstones = 'tombstones' in decision ? decision.tombstones : [];
      const durable = this.commit(decision.events, { tombstones });
      const answered = answer(decision);
      await durable;
      return answered;
    }
  }

  /**
   * The partition's time: the store clock plus its lead (partition-lead.ts), never earlier
   * than its latest event. Commands on it are decided at this time.
   */
  now(): number {
    return this.#lead.at(this.host.now());
  }

  /** A caller's time already in store time (notBefore, deadline: RunQueue's clock.fromWall) in the partition's time; null stays null. */
  fromStoreTime(at: number | null): number | null {
    this.now(); // the lead as of now: it shrinks as time passes, read or not
    return at === null ? null : this.#lead.ahead(at);
  }

  /** A time of this partition's in store time, comparable with other partitions' and with RunQueue.now(). */
  toStoreTime(at: number): number {
    this.now(); // the lead as of now
    return this.#lead.behind(at);
  }

  /**
   * The decision on `command` at `now`, a refusal thrown (for a caller that commits itself:
   * take, submit). ReadFirst when it needs closed entries not at hand: `fetch` them and ask
   * again with them (closed entries at hand: `fetched`, those held unsettled, the cache).
   */
  decide<C extends Command>(command: C, now: number, fetched: Fetched = NOTHING_FETCHED): Accepted<C> | MayReadFirst<C> {
    const decision: Decision = this.#decide(command, now, fetched);
    if (decision.kind === 'refused') throw decision.error;
    return decision as unknown as Accepted<C> | MayReadFirst<C>;
  }

  /** decide.ts on the view, with the closed entries at hand (`closed`: a reader of `fetched`, those held unsettled, the cache). */
  #decide<C extends Command>(command: C, now: number, fetched: Fetched, closed = this.#closedReader(fetched)): Decision {
    return decide(this.#view, command, now, closed);
  }

  /** The closed entries at hand: `fetched`, those the view holds unsettled, the cache (made once per batch, not per item). */
  #closedReader(fetched: Fetched): ClosedReader {
    return (entryId) => fetched.get(entryId) ?? this.#view.unsettledEntry(entryId) ?? this.host.closedCache.get(entryId);
  }

  /** The closed entries the submission keys of `submissions` may name (a batch reads them before deciding its items). */
  async closedEntriesForKeys(submissions: readonly { tenant: string; thread: string; key: string | null }[]): Promise<Fetched> {
    if (!this.serving) await this.ready();
    const ids = submissions.flatMap(({ tenant, thread, key }) =>
      key === null ? [] : this.#view.closed.byKey(tenant, thread, key).map((ticket) => ticket.entryId),
    );
    return ids.length === 0 ? NOTHING_FETCHED : this.fetch(ids, NOTHING_FETCHED);
  }

  /** `fetched` and the closed entries `entryIds` (those still retained), read from the cache or the log. */
  async fetch(entryIds: readonly string[], fetched: Fetched): Promise<Fetched> {
    const more = new Map(fetched);
    const view = this.#view;
    await Promise.all(
      entryIds.map(async (entryId) => {
        const ticket = view.closedTicket(entryId);
        if (ticket === undefined) return;
        try {
          more.set(entryId, await this.closedEntry(ticket));
        } catch (error) {
          // Pruned while it was read: left out, the command is decided again without it (a submission its key
          // named would otherwise fail TicketExpired).
          if (!isRunlogError(error, 'TicketExpired')) throw error;
        }
      }),
    );
    return more;
  }

  /**
   * The closed entry of `ticket` whole: held by the view (its close not durable yet), cached,
   * or read back from the log (then cached). TicketExpired if it is pruned meanwhile.
   */
  async closedEntry(ticket: ClosedTicket): Promise<ClosedEntry> {
    const view = this.#view;
    const held = view.unsettledEntry(ticket.entryId) ?? this.host.closedCache.get(ticket.entryId);
    if (held !== undefined) return held;
    const stored = view.closed.stored(ticket);
    if (stored === null) throw expiredTicket(ticket.entryId, ticket.tenant);
    try {
      const entry = await readClosedEntry(this.log, this.partition, ticket, stored);
      this.host.closedCache.set(entry);
      return entry;
    } catch (error) {
      if (this.#view.closedTicket(ticket.entryId) === undefined) throw expiredTicket(ticket.entryId, ticket.tenant);
      throw error;
    }
  }

  /**
   * Encodes, checks the records fit the log, folds, appends durably, then wakes waiters.
   * Encoding and checking first: a bad or oversized event changes nothing. Everything up to
   * the append runs in the caller's turn (the function's first await is the append), so the
   * events are folded when this returns. `options.tombstones`: record keys tombstoned with the
   * events (loose answers a Prune removes); `options.consumed`: an offset consumed elsewhere,
   * committed with them (a command intake's: group-commit.ts).
   */
  async commit(events: RunlogEvent[], options: CommitOptions = {}): Promise<void> {
    this.#requireServing();
    if (options.consumed !== undefined && this.log.commitsConsumedOffsets !== true) {
      throw invalidArgument(`the ${this.log.kind} log cannot commit consumed offsets with an append (only the Kafka log can)`);
    }
    const { records, closed, bytes, appendBytes: allBytes } = this.#fold(events, options.tombstones);
    this.#inFlight++;
    const written = this.#writer.write(records, options.consumed ?? null, allBytes);
    let offsets: readonly bigint[]; // the group's: this command's records are those from written.at on
    try {
      offsets = await written.durable;
    } catch (error) {
      throw this.#lostToAnother(error) ? this.#claimedMeanwhile(error) : error;
    } finally {
      this.#leaveFlight();
    }
    this.#view.appended(offsets[written.at + records.length - 1]!);
    this.#settled(events, offsets, written.at);
    this.#durable(closed, records.length, bytes);
  }

  /**
   * A batch of commands on this partition (submitBatch, closeBatch): each `add` decides its
   * command against the view (the previous ones folded) and folds its events, in the
   * caller's turn, answering what `answer` builds or the command's refusal (a RunlogError as
   * a value; also the InvalidArgument of events that do not fit a record). `commit` then
   * appends everything added, in one append (several only when it does not fit one), and
   * resolves once durable; a failed append rejects it. Open it once the partition serves.
   * `now`: the partition's time its commands are decided at (a take's, read as it chose the heads).
   */
  batch(fetched: Fetched = NOTHING_FETCHED, now = this.now()): PartitionBatch {
    this.#requireServing();
    const closedReader = this.#closedReader(fetched);
    const writer = this.#writer;
    const records: AppendRecord[][] = [];
    /** Each command's records' size as limits count it (checkRecordsFit measured them as they were folded). */
    const sizes: number[] = [];
    const events: RunlogEvent[][] = [];
    const closed: ClosedEntry[] = [];
    let bytes = 0;
    // Methods, not arrow functions, on the batch made per call: tsx (the bench, the tests) names each arrow it makes.
    const partition = this;
    return {
      add<C extends Command, A>(command: C, answer: (decision: Accepted<C>) => A): A | RunlogError {
        const decision = partition.#decide(command, now, fetched, closedReader);
        if (decision.kind === 'refused') return decision.error;
        // A key naming a closed entry that closed after the batch's entries were read (closedEntriesForKeys): retriable.
        if (isReadFirst(decision)) return notAtHand(decision.entryIds);
        if (decision.events.length > 0) {
          let folded: Folded;
          try {
            folded = partition.#fold(decision.events, 'tombstones' in decision ? decision.tombstones : undefined);
          } catch (error) {
            if (!isRunlogError(error, 'InvalidArgument')) throw error;
            return error;
          }
          records.push(folded.records);
          sizes.push(folded.appendBytes);
          bytes += folded.bytes;
          events.push(decision.events);
          for (const entry of folded.closed) closed.push(entry);
        }
        return answer(decision as Accepted<C>);
      },
      async commit(): Promise<void> {
        // Nothing of its own to append: its answers (refusals, entries named already) may rest on appends in flight.
        if (records.length === 0) return writer.durableSoFar();
        // In flight until settled: a snapshot between the append's answer and the settle below would meet closes
        // whose records' offsets the view does not know yet (RUNLOG_SNAPSHOT_FAILED, seen under bench:peers).
        partition.#inFlight++;
        let offsets: bigint[];
        try {
          offsets = await partition.#append(records, sizes, null);
        } finally {
          partition.#leaveFlight();
        }
        let at = 0;
        for (let i = 0; i < records.length; i++) {
          partition.#settled(events[i]!, offsets, at);
          at += records[i]!.length;
        }
        partition.#durable(
          closed,
          records.reduce((sum, command) => sum + command.length, 0),
          bytes,
        );
      },
    };
  }

  /**
   * Encodes `events`, checks their records fit the log, and folds them (and `tombstones`) into
   * the view: a bad or oversized event changes nothing. Answers the records to append and the
   * entries they close that someone awaits.
   */
  #fold(events: RunlogEvent[], alsoTombstone: readonly string[] | undefined): Folded {
    this.#requireServing();
    const view = this.#view;
    const { records, tombstones } = recordsOf(view, events, alsoTombstone);
    const bytes = checkRecordsFit(this.log, events, records);
    for (let i = 0; i < events.length; i++) view.apply(null, records[i]!.key, events[i]!);
    if (!this.#wakeQueued && events.some(wakesWorkers)) this.#wakeSoon();
    // The entries these events close, taken now: one pruned in the same group is gone from the view once durable.
    const closed = this.#closes.awaitedIn(view, events);
    for (const record of tombstones) view.apply(null, record.key, null);
    // checkRecordsFit measured the events' records; a prune's tombstones beside them are measured here.
    return { records, closed, bytes, appendBytes: tombstones.length === 0 ? bytes : bytes + appendBytes(tombstones) };
  }

  /**
   * Appends a batch's folded records durably (each command's records kept in one append; as
   * few appends as fit the log's limit), and tells the view their last offset. `sizes`: each
   * command's records' size (appendBytes), known from when they were folded.
   */
  async #append(commands: AppendRecord[][], sizes: readonly number[], consumed: ConsumedOffset | null): Promise<bigint[]> {
    const writes: Written[] = [];
    const counts: number[] = [];
    let batch: AppendRecord[] = [];
    let bytes = 0;
    for (let i = 0; i < commands.length; i++) {
      const records = commands[i]!;
      const size = sizes[i]!;
      if (batch.length > 0 && bytes + size > this.log.maxAppendBytes) {
        writes.push(this.#writer.write(batch, consumed, bytes));
        counts.push(batch.length);
        batch = [];
        bytes = 0;
      }
      for (const record of records) batch.push(record);
      bytes += size;
    }
    writes.push(this.#writer.write(batch, consumed, bytes));
    counts.push(batch.length);
    let offsets: bigint[];
    try {
      // One append, the usual case, without Promise.all and its arrays.
      if (writes.length === 1) offsets = offsetsOf(await writes[0]!.durable, writes[0]!.at, counts[0]!);
      else {
        const groups = await Promise.all(writes.map((written) => written.durable));
        offsets = groups.flatMap((group, i) => offsetsOf(group, writes[i]!.at, counts[i]!));
      }
    } catch (error) {
      throw this.#lostToAnother(error) ? this.#claimedMeanwhile(error) : error;
    }
    this.#view.appended(offsets[offsets.length - 1]!);
    return offsets;
  }

  /**
   * The view learns where `events` (folded already) lie (at `offsets` from `from`); the closed
   * entries whose records are all known now are cached if the queue caches closes.
   */
  #settled(events: readonly RunlogEvent[], offsets: readonly bigint[], from = 0): void {
    const settled = this.#view.settle(events, offsets, from);
    if (this.host.cacheCloses) for (const entry of settled) this.host.closedCache.set(entry);
  }

  /** Once a commit of `records` records is durable: wakes the waiters of the entries it closed; snapshots if one is due. */
  #durable(closed: readonly ClosedEntry[], records: number, bytes: number): void {
    this.#closes.wakeAll(closed);
    this.#snapshots.appended(records, bytes);
    if (this.#snapshots.due) this.#snapshotIfIdle();
  }

  /**
   * Wakes the queue's onWork listeners a microtask after a fold that may have made work
   * takeable (a submission, a yield, a close making the thread's next entry its head), not
   * once it is durable: the commands of this turn have queued their records by then, so a
   * take a listener sends is decided against the view holding them and goes in the next
   * append, or the same one as they if theirs has not started, instead of waiting for theirs
   * to be durable first (a whole datasync more between a submission and its handler). Safe:
   * a take answers once its own append is durable, and an append is durable only after every
   * append before it (group-commit.ts). One wake for the folds of a turn.
   */
  #wakeSoon(): void {
    this.#wakeQueued = true;
    queueMicrotask(() => {
      this.#wakeQueued = false;
      this.host.work();
    });
  }

  /** Snapshots the view now if nothing is in flight (snapshot-keeper.ts): the view then holds exactly the log below view.nextOffset. */
  #snapshotIfIdle(): void {
    if (this.#inFlight === 0 && this.serving && !this.#writer.failed) void this.#snapshots.take(this.#view);
  }

  /** Snapshots the view if anything was appended since the last snapshot (the queue's timer). */
  snapshotIfChanged(): void {
    this.#snapshots.want();
    if (this.#snapshots.due) this.#snapshotIfIdle();
  }

  #leaveFlight(): void {
    if (--this.#inFlight > 0) return;
    const idle = this.#idle;
    this.#idle = [];
    for (const wake of idle) wake();
  }

  /**
   * A last snapshot on a clean stop, once nothing is in flight (RunQueue.stop). The writer's
   * barrier has passed by then, but a batch may not have settled its offsets into the view yet.
   */
  async snapshotOnStop(): Promise<void> {
    if (this.#inFlight > 0) await new Promise<void>((resolve) => this.#idle.push(resolve));
    if (this.serving && !this.#writer.failed) await this.#snapshots.final(this.#view);
  }

  /**
   * Commits the expiry of an overdue head that a take came across, as a command of its own,
   * which no caller awaits: if it fails, the failure is this partition's (it rebuilds, and a
   * later take or sweep expires the entry), reported as a warning (RUNLOG_EXPIRE).
   */
  async expireAside(events: [Closed]): Promise<void> {
    try {
      await this.commit(events);
    } catch (error) {
      const why = error instanceof Error ? error.message : String(error);
      const message = `expiring the overdue entry ${events[0].entryId} of partition ${this.partition}, which a take came across, failed: ${why}`;
      this.host.warn({ code: 'RUNLOG_EXPIRE', message });
    }
  }

  /**
   * Throws `refusal` (decided against the view) once everything folded into the view before it
   * is durable: the view runs ahead of the log by the appends in flight, and a refusal may rest
   * on them (EntryClosed by a close in flight, SubmissionKeyReused by a submission in flight):
   * answered before they are durable, a crash could undo what it names (DESIGN invariant 7).
   * Resolves, throwing nothing, if `writer` (the one the refusal was decided under) failed
   * meanwhile: the caller decides again on the rebuilt view.
   */
  async refuseOnceDurable(refusal: unknown, writer: DurabilityOf = this.#writer): Promise<void> {
    if (await this.durable(writer)) throw refusal;
  }

  /** The writer commands are committed through now (refuseOnceDurable's `writer`). */
  get currentWriter(): DurabilityOf {
    return this.#writer;
  }

  /** Resolves once everything committed before the call is durable (or has failed). */
  barrier(): Promise<void> {
    return this.#writer.barrier();
  }

  /**
   * Whether everything folded into the view so far is durable: false once an append in flight
   * has failed (the view held its events; the rebuilt one may not). For an answer read off the
   * view rather than written (a submission key naming an entry already, a refusal, an unchanged
   * decision): decide it again if not. `writer`: the one the answer was decided under.
   */
  async durable(writer: DurabilityOf = this.#writer): Promise<boolean> {
    await writer.barrier();
    return !writer.failed;
  }

  /**
   * Answers what `read` sees of the view now, once everything folded so far is durable:
   * the view runs ahead of the log by the appends in flight, and nothing is answered
   * before it is durable. A refusal (TicketExpired, ...) waits for durability too.
   */
  async durableRead<T>(read: () => T | Promise<T>): Promise<T> {
    for (;;) {
      if (!this.serving) await this.ready();
      const writer = this.#writer;
      let value: T | Promise<T> | undefined;
      let refusal: unknown;
      try {
        value = read();
        // A closed entry read back from the log: awaited below, once the barrier passed.
        if (value instanceof Promise) value.catch(() => undefined);
      } catch (error) {
        refusal = error;
      }
      await writer.barrier();
      // An append failed: what was read may include its events. Read the rebuilt view.
      if (writer.failed) continue;
      if (refusal !== undefined) throw refusal;
      return await (value as T | Promise<T>);
    }
  }

  /** Waits for the open entry `entryId` to close (durably); null on timeout; rejects when the signal aborts, or with why the partition is down or stopped. */
  awaitClose(entryId: string, signal: AbortSignal | undefined, timeoutMs: number | undefined): Promise<Entry | null> {
    const refusal = this.#refusal();
    if (refusal !== null) return Promise.reject(refusal);
    return this.#closes.wait(entryId, signal, timeoutMs);
  }

  /**
   * Makes the partition this queue's (ownership 'assigned'): claims it, fencing its previous
   * writer (whose open transaction the claim completes or aborts first), then replays it, so
   * the view holds everything any earlier owner had acknowledged; then serves. Commands
   * arriving meanwhile wait. Rejects, leaving the partition unowned, if the claim or replay
   * fails. Nothing to do if the partition serves already.
   */
  acquire(): Promise<void> {
    return this.#changeOwnership(async () => {
      if (!this.#is('unowned')) return;
      this.#setMode({ kind: 'acquiring' }, ['unowned']);
      try {
        await this.log.claim?.(this.partition);
        const { view } = await openView(this.log, this.partition, this.host.warn);
        if (this.#is('acquiring')) this.#setServing(view);
      } catch (error) {
        if (!this.#is('acquiring')) throw error;
        // The claim may have gone through before the replay failed: let go of that writer, so the
        // next acquire claims afresh. Kept, the next claim would find it connected and fence
        // nobody, though another node may have claimed the partition in between (and goes on
        // acknowledging beside this one, which replayed and serves).
        await this.log.release?.(this.partition).catch(() => undefined);
        if (!this.#is('acquiring')) throw error;
        this.#mode = { kind: 'unowned' };
        this.#settle(this.host.notOwner(this.partition));
        throw error;
      }
    });
  }

  /**
   * Gives the partition up (ownership 'assigned'): commands are refused with NotOwner at
   * once, the appends in flight settle (answered, or failed retriably), waiters for closes get
   * NotOwner, the view is dropped and the log lets go of the partition's writer.
   */
  release(): Promise<void> {
    return this.#changeOwnership(async () => {
      if (this.#is('unowned') || this.#is('stopped')) return;
      this.#setMode({ kind: 'releasing' }, ['serving', 'draining', 'rebuilding', 'down']);
      const notOwner = this.host.notOwner(this.partition);
      this.#settle(notOwner);
      await this.#writer.barrier();
      this.#closes.failAll(notOwner);
      this.#releasedAt = this.#view.nextOffset;
      this.#view = new PartitionView(this.partition);
      this.#snapshots.reset(this.#view);
      await this.log.release?.(this.partition);
      if (this.#is('releasing')) this.#mode = { kind: 'unowned' };
    });
  }

  /** Runs an ownership change once the previous one has ended (however it ended). */
  #changeOwnership(change: () => Promise<void>): Promise<void> {
    const next = this.#ownershipChange.then(change);
    this.#ownershipChange = next.catch(() => undefined);
    return next;
  }

  /** Another node claimed the partition: release it, saying so. */
  #releaseLost(error: RunlogError): void {
    const message = `partition ${this.partition} was claimed by another writer and is released: ${error.message}`;
    this.host.warn({ code: 'RUNLOG_PARTITION_LOST', message });
    this.release().catch((failure: unknown) => {
      const why = failure instanceof Error ? failure.message : String(failure);
      this.host.warn({ code: 'RUNLOG_PARTITION_LOST', message: `releasing partition ${this.partition} failed: ${why}` });
    });
  }

  /**
   * A command's append failed as another node claimed the partition (ownership 'assigned'):
   * retriable, as any handover's refusal, but LogUnavailable and not NotOwner, since whether it
   * was written is unknown here (a commit whose answer was lost may have landed before the
   * claim; its new owner then has it). Fenced, which says this queue is done for, would stop
   * a client retrying through the handover.
   */
  #claimedMeanwhile(error: RunlogError): RunlogError {
    const message = `partition ${this.partition} was claimed by another node while this command's append was in flight; its new owner has the command's events if they were written: ${error.message}`;
    return new RunlogError('LogUnavailable', message, { cause: error, retriable: true });
  }

  /** Whether `error` says another writer owns the partition now, in a queue whose partitions are assigned (then it is released, not down). */
  #lostToAnother(error: unknown): error is RunlogError {
    return this.host.assigned && isRunlogError(error, 'Fenced');
  }

  /** The queue stopped: waiting commands fail with Stopped, and no rebuild continues. */
  stop(): void {
    if (this.#mode.kind === 'stopped') return;
    const error = new RunlogError('Stopped', 'the run queue was stopped');
    this.#mode = { kind: 'stopped', error };
    this.#settle(error);
    this.#stopping.abort();
    this.#closes.failAll(error);
  }

  /** Throws why the partition does not serve, if it does not (a guard; commands wait with ready() first). */
  #requireServing(): void {
    if (this.serving) return;
    throw (
      this.#refusal() ??
      new RunlogError('LogUnavailable', `partition ${this.partition} is being rebuilt from the log after a failed append`, {
        retriable: true,
      })
    );
  }

  /** Why the partition is down or stopped for good; null while it serves or may serve again. */
  get downError(): RunlogError | null {
    return this.#finalError();
  }

  #finalError(): RunlogError | null {
    return this.#mode.kind === 'down' || this.#mode.kind === 'stopped' ? this.#mode.error : null;
  }

  /** Why a command is refused at once, if it is: the partition is down, stopped, or not this queue's. */
  #refusal(): RunlogError | null {
    if (this.#is('unowned') || this.#is('releasing')) return this.host.notOwner(this.partition);
    return this.#finalError();
  }

  #newWriter(): GroupCommit {
    return new GroupCommit(this.log, this.partition, {
      failed: () => {
        if (this.#is('serving')) this.#setDraining();
      },
      drained: (error) => this.#drained(error),
    });
  }

  /** The writer failed and nothing is in flight any more: down for good, or rebuild. */
  #drained(error: unknown): void {
    if (!this.#is('draining')) return; // stopped or released meanwhile
    if (this.#lostToAnother(error)) return this.#releaseLost(error);
    if (isFinal(error)) return this.#setDown(error);
    this.#setRebuilding(null);
    void this.#rebuild(++this.#rebuildsBegun);
  }

  async #rebuild(rebuild: number): Promise<void> {
    const backoff = new Backoff({ ...REBUILD_BACKOFF, signal: this.#stopping.signal });
    const current = (): boolean => this.#is('rebuilding') && this.#rebuildsBegun === rebuild;
    while (current()) {
      try {
        await this.log.claim?.(this.partition);
        const { view } = await openView(this.log, this.partition, this.host.warn);
        if (current()) this.#setServing(view);
        return;
      } catch (error) {
        if (!current()) return;
        if (this.#lostToAnother(error)) return this.#releaseLost(error);
        if (isFinal(error)) return this.#setDown(error);
        const failure = this.#whyRebuildFails(error);
        if (!failure.retriable) return this.#setDown(failure);
        this.#retryLater(failure, backoff.tries + 1);
        await backoff.after(error).catch(() => {}); // it ends early only when the queue stops (the loop then ends)
      }
    }
  }

  /** A failed rebuild attempt's error, as every command meanwhile gets it: retriable unless the log says retrying cannot help. */
  #whyRebuildFails(error: unknown): RunlogError {
    const retriable = !isRunlogError(error) || error.retriable;
    const why = error instanceof Error ? error.message : String(error);
    const message = `partition ${this.partition} cannot serve: rebuilding it from the log after a failed append fails: ${why}`;
    return new RunlogError(retriable ? 'LogUnavailable' : (error as RunlogError).code, message, { cause: error, retriable });
  }

  /** Says why the rebuild failed (to the commands waiting for it, in health(), in a warning); the next attempt follows a pause. */
  #retryLater(failure: RunlogError, failures: number): void {
    this.#setRebuilding(failure);
    const message = `${failure.message} (attempt ${failures}; trying again, backing off up to ${REBUILD_BACKOFF.maxMs / 1000} s)`;
    this.host.warn({ code: 'RUNLOG_PARTITION_DOWN', message });
    this.#settle(failure);
  }

  // The transitions. Each asserts the modes it may come from: another is a bug in this file.

  #setDraining(): void {
    this.#setMode({ kind: 'draining' }, ['serving']);
  }

  #setRebuilding(error: RunlogError | null): void {
    this.#setMode({ kind: 'rebuilding', error }, ['draining', 'rebuilding']);
  }

  #setServing(view: PartitionView): void {
    const acquired = this.#is('acquiring');
    this.#setMode({ kind: 'serving' }, ['rebuilding', 'acquiring']);
    this.#generation++;
    this.#view = view;
    this.#snapshots.reset(view);
    // Acquired back with nothing written since this queue released it: its leases were granted in this queue's time.
    const ownTimes = !acquired || view.nextOffset === this.#releasedAt;
    this.#releasedAt = null;
    this.#followTimes(view.lastAt, !ownTimes);
    this.#writer = this.#newWriter();
    this.#settle(null);
    this.host.work();
  }

  /**
   * The partition's time starts no earlier than its latest event (`lastAt`): a view acquired
   * from a node whose clock ran ahead gives it a lead over the store clock, its own; the
   * other partitions' times, and the leases granted on them, are not moved (partition-lead.ts).
   */
  #followTimes(lastAt: number, acquired: boolean): void {
    const storeTime = this.host.now();
    const lead = this.#lead.follow(lastAt, storeTime, !acquired);
    if (lead <= this.host.clockToleranceMs) return;
    this.host.warn({
      code: 'RUNLOG_CLOCK_STEP',
      message:
        `runlog store clock: partition ${this.partition}'s latest event is ${lead} ms ahead of store time ` +
        `(written by a node whose clock ran ahead); its times continue from that event at the store clock's rate, ` +
        `slewing toward it at 500 ppm; the other partitions' times are not moved`,
    });
  }

  #setDown(error: RunlogError): void {
    this.#setMode({ kind: 'down', error }, ['draining', 'rebuilding', 'acquiring']);
    this.host.warn({
      code: 'RUNLOG_PARTITION_DOWN',
      message: `${error.message} (partition ${this.partition} is down for good: ${error.code})`,
    });
    this.#settle(error);
    this.#closes.failAll(error);
  }

  #setMode(next: Mode, from: readonly Mode['kind'][]): void {
    if (!from.includes(this.#mode.kind))
      throw new Error(`partition ${this.partition}: no transition from ${this.#mode.kind} to ${next.kind}`);
    this.#mode = next;
  }

  /** Whether the mode is `kind` (a call, so that TypeScript does not keep a narrowing across awaits). */
  #is(kind: Mode['kind']): boolean {
    return this.#mode.kind === kind;
  }

  #settle(failure: RunlogError | null): void {
    const waiters = this.#rebuildWaiters;
    this.#rebuildWaiters = [];
    for (const wake of waiters) wake(failure);
  }
}

/** Another writer owns the partition now (Kafka fencing, the file log's lock): this queue never serves it again. */
function isFinal(error: unknown): error is RunlogError {
  return isRunlogError(error, 'Fenced') || isRunlogError(error, 'Locked');
}
