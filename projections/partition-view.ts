/**
 * The RunQueue view of one partition: a pure fold of its records.
 *
 * `apply(offset, key, event)` is the only writer. It is used live (right after a
 * command's events are decided) and in replay, so both build the same view. Records
 * at offsets already folded are ignored, which makes delivering a record twice harmless.
 * A null event is a tombstone (retention): it removes the entry its key names.
 *
 * The fold keeps only what the latest record of each key carries (see
 * src/events/keys.ts), so a compacted log replays to the same view minus pruned entries:
 * e.g. a lease clears notBefore and a close clears the lease, exactly as the surviving
 * record alone would say.
 *
 * `entries`, `threads` and `submissionKeys` hold the open entries only. A closing entry leaves
 * them for `closed` (closed-tickets.ts: a row of the ticket index, which knows where the
 * entry's records lie in the log); the queue reads a closed entry whole from its cache or the
 * log. So the fold learns each record's offset: at once in replay, and through `settle` for
 * the live writer's own records (folded before the append answers with their offsets).
 */
import type { UnreadFields } from '../src/events/codec.ts';
import type { AttemptStarted, EntriesPruned, EventType, RunlogEvent, Submitted, TicketKeyCreated } from '../src/events/types.ts';
import { entryIdOfKey, isAnswerKey } from '../src/events/keys.ts';
import { Answers } from './answers.ts';
import { closedEntryOf, type ClosedEntry, type Closing } from './closed-entry.ts';
import { ClosedTickets, submissionKeyId, type ClosedTicket } from './closed-tickets.ts';
import { Heap } from './heap.ts';
import { HeadIndex, takesBefore } from './head-index.ts';
import { EntryState, GrantedLease, StartedAttempt, addAttempt } from './entry-state.ts';
import { ChurnMap } from '../src/churn-map.ts';
import { TenantCounts } from './tenant-counts.ts';
import { ThreadIndex } from './thread-index.ts';
import { ThreadState } from './thread-state.ts';
import { emptyMetrics, recordExec, recordWait, type MetricCounters } from './metrics.ts';

export { submissionKeyId, type ClosedTicket } from './closed-tickets.ts';

/** Rebuild the deadline heap once it holds this many more items than open entries with a deadline. */
const DEADLINE_SLACK = 1024;
const CLOSING_TYPES: ReadonlySet<string> = new Set<Closing['type']>(['Closed', 'CancelRequested', 'ThreadDeleted']);

/**
 * The event types whose fold (applyEvent) keeps no reference to the event itself, only values
 * of its fields: a replay decodes them into one reused object per type (src/projector/replay.ts,
 * codec.ts foldDecoder), with the string fields listed here not made. All but Submitted find
 * their entry by entryId, never reading the event's tenant or thread (the entry has them).
 * Keep it true of applyEvent.
 */
export const FOLD_UNREAD: UnreadFields<EventType> = {
  ...Object.fromEntries(
    (['Leased', 'LeaseExtended', 'Yielded', 'AttemptStarted', 'Closed', 'CancelRequested', 'ThreadDeleted'] as const).map((type) => [
      type,
      ['tenant', 'thread'],
    ]),
  ),
  // Read whole (its entry is made of its fields, its tenant and thread find the entry's thread), into one reused object.
  Submitted: [],
};

export class PartitionView {
  /** The offset of the last record folded (kept rather than nextOffset: no bigint per record). */
  #lastOffset = -1n;
  /** The same as a number while `applyAt` folds (the file log's replay: no bigint per record); #lastOffset is then behind. */
  #lastNumber = -1;
  #numbered = false;
  /** The latest store-clock time on any event folded. */
  lastAt = 0;
  /** The highest entry sequence ever issued here (survives pruning and compaction). */
  issuedThrough = 0;
  /** The partition's ticket key (src/queue/entry-id.ts); null until its first submission. */
  ticketKey: Pick<TicketKeyCreated, 'secret' | 'legacyThrough'> | null = null;
  openCount = 0;
  // The open entries, their threads and submission keys: they come and go in bursts (src/churn-map.ts says why a ChurnMap).
  readonly #entries = new ChurnMap<string, EntryState>();
  readonly #threads = new ThreadIndex<ThreadState<EntryState>>();
  readonly #submissionKeys = new ChurnMap<string, string>();
  /**
   * One entry kept whole as it closes, for a reader following it past its close (`runlog state
   * --at --entry`: src/cli/fold-until.ts): a closed entry leaves the view and drops its run
   * (EntryState.retire), so its EntryState no longer says what it held. Read `watchedClose` after.
   */
  watchedEntryId: string | null = null;
  /** The watched entry as it closed (a copy), once it has. */
  watchedClose: ClosedEntry | null = null;
  /** Answers to requests of the commands topic (answers.ts). */
  readonly answers = new Answers();
  readonly openByTenant = new TenantCounts();
  readonly metrics: MetricCounters = emptyMetrics();
  private readonly heads = new Map<string, HeadIndex<EntryState>>();
  /** The retained closed tickets (closed-tickets.ts). */
  readonly closed: ClosedTickets;
  private readonly deadlines = new Heap<EntryState>((a, b) => a.deadline! < b.deadline!);
  /** Open entries with a deadline (the heap also holds closed ones until their deadline or a rebuild). */
  private deadlinesOpen = 0;
  /** watchEntryChanges's watchers; null while there are none. */
  #entryWatchers: Set<(entry: EntryState) => void> | null = null;
  /** While true (a catch-up: deferHeads), heads are not offered to the head indexes as they change; indexHeads offers the current ones. */
  #headsDeferred = false;

  constructor(readonly partition: number) {
    this.closed = new ClosedTickets(partition, () => this.ticketKey);
  }

  /**
   * Calls `beforeChange` with each open entry the fold is about to change, before it changes
   * it, until the answered function is called (a snapshot writing its open entries across turns:
   * open-threads-writing.ts). Every change to an open entry is made in applyEvent, after them.
   */
  watchEntryChanges(beforeChange: (entry: EntryState) => void): () => void {
    const watchers = (this.#entryWatchers ??= new Set());
    const watcher = (entry: EntryState): void => beforeChange(entry);
    watchers.add(watcher);
    return () => {
      watchers.delete(watcher);
      if (this.#entryWatchers === watchers && watchers.size === 0) this.#entryWatchers = null;
    };
  }

  /** The open entries. */
  get entries(): Map<string, EntryState> {
    return this.#entries.map;
  }

  /** The threads with an open entry (during a catch-up, also those it emptied: indexHeads drops them). */
  get threads(): ThreadIndex<ThreadState<EntryState>> {
    return this.#threads;
  }

  /** The open entries' submission keys (submissionKeyId) to their entry ids. */
  get submissionKeys(): ChurnMap<string, string> {
    return this.#submissionKeys;
  }

  /**
   * Folds one record. `offset` is null when the writer folds its own events before they
   * are durable (it reports their offsets later through `appended`).
   */
  apply(offset: bigint | null, key: string, event: RunlogEvent | null): void {
    if (offset !== null) {
      if (offset <= this.#last()) return;
      this.#lastOffset = offset;
    }
    if (event === null) return this.applyTombstone(key);
    if (event.at > this.lastAt) this.lastAt = event.at;
    this.applyEvent(event, offset === null ? -1 : Number(offset));
  }

  /**
   * `apply` of a record at `offset`, a safe integer (a replay reading records where they lie:
   * src/projector/replay.ts). `key` is read only for a tombstone (the caller may pass '' with an event).
   */
  applyAt(offset: number, key: string, event: RunlogEvent | null): void {
    if (!this.#numbered) {
      if (BigInt(offset) <= this.#lastOffset) return;
      this.#numbered = true;
    } else if (offset <= this.#lastNumber) return;
    this.#lastNumber = offset;
    if (event === null) return this.applyTombstone(key);
    if (event.at > this.lastAt) this.lastAt = event.at;
    this.applyEvent(event, offset);
  }

  /** The offset of the last record folded, brought up to date after `applyAt`. */
  #last(): bigint {
    if (this.#numbered) {
      this.#lastOffset = BigInt(this.#lastNumber);
      this.#numbered = false;
    }
    return this.#lastOffset;
  }

  /**
   * The writer's own `events`, folded already, lie at `offsets` from index `from` (the
   * append's answer, in order; tombstones after them need none). Answers the closed entries whose records are
   * all known now: durable, so the queue may cache them.
   */
  settle(events: readonly RunlogEvent[], offsets: readonly bigint[], from = 0): ClosedEntry[] {
    const settled: ClosedEntry[] = [];
    for (let i = 0; i < events.length; i++) {
      const event = events[i]!;
      const attempt =
        event.type === 'Submitted' ? 0 : event.type === 'AttemptStarted' ? event.attempt : CLOSING_TYPES.has(event.type) ? -1 : null;
      if (attempt === null) continue;
      const offset = Number(offsets[from + i]!);
      const entryId = event.entryId!;
      const open = this.#entries.get(entryId);
      if (open !== undefined) {
        if (attempt === 0) open.submittedOffset = offset;
        else if (attempt > 0) (open.attemptOffsets as number[])[attempt - 1] = offset;
        continue;
      }
      const entry = this.closed.settle(entryId, attempt, offset);
      if (entry !== null) settled.push(entry);
    }
    return settled;
  }

  /** The writer's own records, folded already, are durable up to `lastOffset`. */
  appended(lastOffset: bigint): void {
    if (lastOffset > this.#last()) this.#lastOffset = lastOffset;
  }

  /** Records below this offset are folded already. */
  get nextOffset(): bigint {
    return this.#last() + 1n;
  }

  thread(tenant: string, thread: string): ThreadState<EntryState> | undefined {
    return this.#threads.find(tenant, thread);
  }

  readonly isHead = (entry: EntryState): boolean => entry.threadState.head() === entry;

  /** The best takeable head among `agents` and of `tenants` (null: any tenant) at `now`, by priority then age. */
  bestHead(agents: readonly string[], now: number, tenants: readonly string[] | null = null): EntryState | undefined {
    let best: EntryState | undefined;
    for (const agent of agents) {
      const candidate = this.heads.get(agent)?.best(now, this.isHead, tenants);
      if (candidate !== undefined && (best === undefined || takesBefore(candidate, best))) best = candidate;
    }
    return best;
  }

  /** When the next head of `agents` and of `tenants` (null: any tenant) becomes takeable (a time passed already if one is takeable now), or null. */
  nextDueAt(agents: readonly string[], tenants: readonly string[] | null = null): number | null {
    let earliest: number | null = null;
    for (const agent of agents) {
      const at = this.heads.get(agent)?.nextAt(this.isHead, tenants) ?? null;
      if (at !== null && (earliest === null || at < earliest)) earliest = at;
    }
    return earliest;
  }

  /** Closed tickets, oldest close first, while `accept` says yes; at most `limit`. */
  oldestClosed(limit: number, accept: (ticket: { closedAt: number }) => boolean): ClosedTicket[] {
    return this.closed.oldest(limit, (closedAt) => accept({ closedAt }));
  }

  /** The retained closed ticket `entryId` (closed-tickets.ts), or undefined. */
  closedTicket(entryId: string): ClosedTicket | undefined {
    return this.closed.find(entryId);
  }

  /** A closed entry still held whole (closed, its append not answered yet), or undefined. */
  unsettledEntry(entryId: string): ClosedEntry | undefined {
    return this.closed.unsettledEntry(entryId);
  }

  /**
   * Entries whose deadline passed by `now` that `accept` takes (decide.ts's overdue rule).
   * Each is dropped from the deadline index once returned or refused: `accept` must refuse
   * only entries it would refuse forever after (closed, or started).
   */
  passedDeadlines(now: number, accept: (entry: EntryState, now: number) => boolean): EntryState[] {
    const found: EntryState[] = [];
    for (let top = this.deadlines.peek(); top !== undefined && top.deadline! <= now; top = this.deadlines.peek()) {
      this.deadlines.pop();
      if (accept(top, now)) found.push(top);
    }
    return found;
  }

  private applyEvent(event: RunlogEvent, offset: number): void {
    if (event.type === 'Submitted') return this.submit(event, offset);
    if (event.type === 'EntriesPruned') return this.pruned(event);
    if (event.type === 'TicketKeyCreated') {
      this.ticketKey = { secret: event.secret, legacyThrough: event.legacyThrough };
      return;
    }
    if (event.type === 'CommandAnswered') return this.answers.fold(event, this.#isEntryOf);
    const entry = this.#entries.get(event.entryId);
    if (entry === undefined) return;
    if (this.#entryWatchers !== null) for (const watcher of this.#entryWatchers) watcher(entry);
    switch (event.type) {
      case 'Leased':
      case 'LeaseExtended':
        entry.lease = new GrantedLease(event.holder, event.epoch, event.expiresAt);
        entry.lastEpoch = Math.max(entry.lastEpoch, event.epoch);
        entry.deferredAttempts = event.deferredAttempts;
        entry.notBefore = null;
        return this.reindex(entry);
      case 'Yielded':
        if (event.kind === 'retry') this.retried(entry, event.at);
        entry.lease = null;
        entry.lastEpoch = Math.max(entry.lastEpoch, event.epoch);
        entry.notBefore = event.notBefore;
        entry.deferredAttempts = event.deferredAttempts;
        return this.reindex(entry);
      case 'AttemptStarted':
        return this.attemptStarted(entry, event, offset);
      case 'Closed':
      case 'CancelRequested':
      case 'ThreadDeleted':
        return this.close(entry, event, offset);
    }
  }

  readonly #isEntryOf = (entryId: string, tenant: string): boolean =>
    (this.#entries.get(entryId) ?? this.closed.find(entryId))?.tenant === tenant;

  private submit(event: Submitted, offset: number): void {
    // Folded already (a record delivered twice)? Only a seq issued already can be: the writer's own are new.
    if (event.seq <= this.issuedThrough && (this.#entries.has(event.entryId) || this.closed.index.rowOf(event.seq) >= 0)) return;
    const thread = this.threadOf(event.tenant, event.thread);
    const entry = new EntryState(event, thread, this.headIndex(event.agent));
    entry.submittedOffset = offset;
    this.#entries.set(entry.entryId, entry);
    if (event.seq > this.issuedThrough) this.issuedThrough = event.seq;
    const wasIdle = thread.openCount === 0;
    thread.append(entry);
    if (entry.key !== null) this.#submissionKeys.set(submissionKeyId(entry.tenant, entry.thread, entry.key), entry.entryId);
    this.countOpen(thread, 1);
    if (entry.deadline !== null) {
      this.deadlines.push(entry);
      this.deadlinesOpen++;
    }
    this.metrics.enqueued++;
    if (wasIdle && !this.#headsDeferred) entry.heads.offer(entry);
  }

  private attemptStarted(entry: EntryState, event: AttemptStarted, offset: number): void {
    addAttempt(entry, new StartedAttempt(event.runId, event.attempt, event.epoch, event.at), offset);
    entry.threadState.attemptAdded(entry);
    if (event.attempt === 1) recordWait(this.metrics, event.at - entry.submittedAt);
  }

  private retried(entry: EntryState, at: number): void {
    this.metrics.retried++;
    const last = entry.attempts[entry.attempts.length - 1];
    if (last !== undefined) recordExec(this.metrics, at - last.startedAt);
  }

  /** The entry closes: it leaves the open structures for a row of the ticket index. */
  private close(entry: EntryState, event: Closing, offset: number): void {
    if (entry.closed) return;
    const thread = entry.threadState;
    const wasHead = thread.head() === entry;
    entry.closedAt = event.at;
    entry.lease = null;
    entry.notBefore = null;
    // The closing record replaces the state record under compaction: what it says is all a replay has.
    entry.deferredAttempts = event.deferredAttempts;
    entry.version++;
    this.recordOutcome(entry, event); // an entry with an outcome is closed
    thread.entryClosed();
    this.countOpen(thread, -1);
    const next = wasHead ? thread.head() : undefined;
    if (next !== undefined) this.reindex(next);
    this.leaveOpen(entry);
    this.closed.add(entry, offset);
    if (entry.entryId === this.watchedEntryId) this.watchedClose = closedEntryOf(entry);
    entry.retire();
  }

  /** Drops a closed entry from the open entries and the keys, and its thread if none is open. */
  private leaveOpen(entry: EntryState): void {
    this.#entries.delete(entry.entryId);
    const thread = entry.threadState;
    // A catch-up keeps an emptied thread until indexHeads: the thread's next entry, often soon, finds it rather than making it again.
    if (thread.openCount === 0 && !this.#headsDeferred) this.#threads.delete(thread);
    if (entry.key !== null) {
      const keyId = submissionKeyId(entry.tenant, entry.thread, entry.key);
      if (this.#submissionKeys.get(keyId) === entry.entryId) this.#submissionKeys.delete(keyId);
    }
    if (entry.deadline !== null && --this.deadlinesOpen * 2 + DEADLINE_SLACK < this.deadlines.size) {
      this.deadlines.retain((held) => !held.closed);
    }
  }

  private recordOutcome(entry: EntryState, event: Closing): void {
    if (event.type === 'CancelRequested') {
      entry.outcome = 'cancelled';
      entry.error = event.reason;
    } else if (event.type === 'ThreadDeleted') {
      entry.outcome = 'threadDeleted';
    } else {
      entry.outcome = event.outcome;
      entry.result = event.result;
      entry.error = event.error;
    }
    const outcome = entry.outcome;
    if (outcome === 'succeeded' || outcome === 'failed') {
      this.metrics[outcome]++;
      const last = entry.attempts[entry.attempts.length - 1];
      if (last !== undefined) recordExec(this.metrics, event.at - last.startedAt);
    } else if (outcome === 'expired' || outcome === 'cancelled') {
      this.metrics[outcome]++;
    }
  }

  private pruned(event: EntriesPruned): void {
    if (event.issuedThrough > this.issuedThrough) this.issuedThrough = event.issuedThrough;
    for (const entryId of event.entryIds) this.remove(entryId);
  }

  private applyTombstone(key: string): void {
    if (isAnswerKey(key)) return this.answers.remove(key);
    const entryId = entryIdOfKey(key);
    if (entryId !== null) this.remove(entryId);
  }

  /** Drops a closed entry (retention). Only closed entries are pruned; anything else is ignored. */
  private remove(entryId: string): void {
    if (!this.closed.remove(entryId)) return;
    this.answers.entryRemoved(entryId);
    this.metrics.dropped++;
  }

  private reindex(entry: EntryState): void {
    entry.version++;
    if (!this.#headsDeferred && !entry.closed && this.isHead(entry)) entry.heads.offer(entry);
  }

  /**
   * Until indexHeads, heads are not offered to the head indexes as the fold changes them: a
   * catch-up (src/projector/replay.ts) folds records nobody takes from meanwhile, and most of
   * its offers would be stale before it ends (each lifecycle offers its entry twice, then closes
   * it). Takes must not be asked meanwhile: they would miss the heads not offered yet.
   */
  deferHeads(): void {
    this.#headsDeferred = true;
  }

  /**
   * Ends deferHeads: every thread's current head is offered (its version bumped: items offered
   * before it are stale), and the threads the catch-up emptied are dropped.
   */
  indexHeads(): void {
    if (!this.#headsDeferred) return;
    this.#headsDeferred = false;
    let emptied = 0;
    for (const thread of this.#threads.values()) {
      const head = thread.head();
      if (head !== undefined) this.reindex(head);
      else emptied++;
    }
    if (emptied > 0) {
      for (const thread of [...this.#threads.values()]) if (thread.openCount === 0) this.#threads.delete(thread);
    }
  }

  private threadOf(tenant: string, threadName: string): ThreadState<EntryState> {
    let thread = this.#threads.find(tenant, threadName);
    if (thread === undefined) {
      thread = new ThreadState(tenant, threadName, this.openByTenant.counterOf(tenant));
      this.#threads.add(thread);
    }
    return thread;
  }

  private headIndex(agent: string): HeadIndex<EntryState> {
    let index = this.heads.get(agent);
    if (index === undefined) {
      index = new HeadIndex(agent);
      this.heads.set(agent, index);
    }
    return index;
  }

  private countOpen(thread: ThreadState<EntryState>, delta: number): void {
    this.openCount += delta;
    thread.tenantOpen.open += delta;
  }
}
