/**
 * Group commit for one partition of the queue: many commands' records, one append.
 *
 * Commands decide and fold their events at once (single-threaded, so decisions never
 * race) and then wait here until those events are durable. Every command arriving in the
 * same tick joins one group, and a group is one append: one fsync (file) or one
 * transaction (Kafka) for all of it. Each command resolves only when the append holding
 * its records has completed.
 *
 * How many appends are in flight at once is the log's call (EventLog.appendsInFlight).
 * The file log fsyncs one group at a time, so while one append is in flight every command
 * arriving queues here and goes in the next group. Kafka pipelines transactions, so groups
 * go to it at once, up to its bound, and it coalesces what queues behind its open
 * transactions.
 *
 * Starting early, on a log of one append at a time. Callers that each wait for their last
 * command before sending the next (64 lifecycle callers, a Worker's 64 slots) fall into lock
 * step: a group's durability wakes all its callers in one turn, they decide their next
 * commands in that turn, and the group those form waits for the turn's end. The fsync and the
 * deciding then take turns, each idle while the other works:
 *
 *   decide 64 ──▶ fsync ──▶ decide 64 ──▶ fsync ...            (CPU idle during each fsync)
 *
 * So when nothing is in flight and the group holds half the records of the previous turn (at
 * least 16), it starts at once, in the middle of the turn, if that pays (group-pacing.ts: when
 * an append takes less time than the turns of deciding every caller's command): its write and datasync
 * run (on libuv's pool) while the turn decides the rest, which form the next group. The
 * callers split into two cohorts, one deciding while the other's group is made durable, and
 * stay split: a command arriving while a group is in flight joins the one unstarted group, so
 * there are never more than two. Only when a group starts changes: groups still land in
 * order, and a command still answers only once its group is durable.
 *
 * The cohorts are gathered again when splitting stops paying (the device got slower than the
 * deciding), and while the owner awaits an idle moment (GroupCommitOwner.awaitsIdle): two
 * cohorts never leave the partition idle (some command is always folded and not yet durable),
 * and a snapshot waits for one (snapshot-keeper.ts). Gathering: a group that completes lets
 * the next one start only after the turn its callers wake in, so their next commands join it.
 * Once that one group is durable, all its commands settle in one turn with nothing else in
 * flight (the snapshot is taken), and a later turn may split the callers again.
 *
 * A failed append rejects every command of its group and everything queued behind it
 * (those were decided against a view that assumed the failed group); appends already in
 * flight behind it fail too (the log guarantees that). From the failure on, `failed` is
 * true and the owner hears of it at once (`failed`: it stops deciding against the view);
 * once nothing is in flight any more, it hears `drained`: it must rebuild the view from
 * the log before serving the partition again, with a new GroupCommit (partition.ts).
 *
 * Consumed offsets (a command intake's: EventLog.append's `consumed`) ride the group: a group
 * commits the highest offset its commands consumed, atomically with their records (groups
 * land in order, so the committed offset never passes a command whose records are not in).
 * Commands consuming another group's, topic's or partition's offsets go in another group.
 */
import { APPEND_BUILT, appendBytes, consumedKey, type AppendRecord, type ConsumedOffset, type EventLog } from '../log/event-log.ts';
import { GroupPacing } from './group-pacing.ts';

/**
 * A group: the records of the commands that joined it, in order, appended as one. Formed as
 * commands write (a command joins the last unstarted group if its records fit beside the
 * others' and it consumes no other offsets), so a command costs no promise of its own: every
 * command of a group awaits the group's one promise and finds its offsets at its index.
 */
interface Group {
  records: AppendRecord[];
  bytes: number;
  /** The highest offset its commands consumed, and whose it is (consumedKey), if any. */
  consumed: ConsumedOffset | null;
  consumedKey: string | null;
  /** Resolves with the offsets of all its records once they are durable. */
  durable: Promise<readonly bigint[]>;
  resolve: (offsets: readonly bigint[]) => void;
  reject: (error: unknown) => void;
}

/** Where a command's records went: its group's offsets, once durable, hold theirs from `at` on. */
export interface Written {
  durable: Promise<readonly bigint[]>;
  at: number;
}

/** Who hears of a failed append (first at once, then once nothing is in flight any more), and says whether it awaits an idle moment. */
export interface GroupCommitOwner {
  failed(error: unknown): void;
  drained(error: unknown): void;
  /** Whether the owner waits for a moment with nothing in flight (a snapshot is due): groups then gather whole turns (above). */
  awaitsIdle(): boolean;
}

export class GroupCommit {
  /** Groups not started yet, oldest first; commands join the last. */
  private queue: Group[] = [];
  private readonly maxInFlight: number;
  /** Whether a group may start in the middle of a turn: on a log of one append at a time (the file log). */
  private readonly startsEarly: boolean;

  private inFlight = 0;
  private scheduled = false;
  private failure: unknown = null;
  private failureReported = false;
  /** The last group written to (its callers handle its rejection); barrier() waits for it to settle. */
  private lastWrite: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly log: EventLog,
    private readonly partition: number,
    private readonly owner: GroupCommitOwner,
    /** Whether starting early pays, measured (on a log of one append at a time). */
    private readonly pacing = new GroupPacing(),
  ) {
    this.maxInFlight = Math.max(1, log.appendsInFlight ?? 1);
    this.startsEarly = this.maxInFlight === 1;
  }

  /** Whether an append has failed: nothing written through this writer any more can succeed. */
  get failed(): boolean {
    return this.failure !== null;
  }

  /**
   * Queues `records` (and `consumed`, committed with them) in a group. Its `durable` resolves
   * with the group's offsets once they are durable: the records' own are those from `at` on
   * (offsetsOf). The caller must await `durable` at once (its rejection is the caller's to
   * handle). The records must fit one append (record-bounds.ts). `bytes`: their appendBytes,
   * when the caller measured them already.
   */
  write(records: AppendRecord[], consumed: ConsumedOffset | null = null, bytes = appendBytes(records)): Written {
    if (this.failure !== null) return { durable: Promise.reject(this.failure), at: 0 };
    const key = consumed === null ? null : consumedKey(consumed);
    const group = this.groupFor(bytes, key);
    const at = group.records.length;
    for (let r = 0; r < records.length; r++) group.records.push(records[r]!);
    group.bytes += bytes;
    if (consumed !== null && (group.consumed === null || consumed.offset > group.consumed.offset)) group.consumed = consumed;
    group.consumedKey ??= key;
    this.lastWrite = group.durable;
    if (this.startsEarly) this.pacing.wrote(records.length);
    if (this.startsEarly && this.inFlight === 0 && !this.owner.awaitsIdle() && this.pacing.split(group.records.length)) this.startGroup();
    else this.schedule();
    return { durable: group.durable, at };
  }

  /** The last unstarted group if records of `bytes` consuming `key`'s offsets fit in it (an empty group takes anything), else a new one. */
  private groupFor(bytes: number, key: string | null): Group {
    const last = this.queue[this.queue.length - 1];
    if (
      last !== undefined &&
      (last.records.length === 0 || last.bytes + bytes <= this.log.maxAppendBytes) &&
      (key === null || last.consumedKey === null || key === last.consumedKey)
    )
      return last;
    let resolve!: (offsets: readonly bigint[]) => void;
    let reject!: (error: unknown) => void;
    const durable = new Promise<readonly bigint[]>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    const group: Group = { records: [], bytes: 0, consumed: null, consumedKey: null, durable, resolve, reject };
    this.queue.push(group);
    return group;
  }

  /** Resolves once everything written before the call is durable (or has failed). */
  barrier(): Promise<void> {
    return this.lastWrite.then(noop, noop);
  }

  /** Starts the next group a microtask from now, so that commands of this tick join it. */
  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    queueMicrotask(() => {
      this.scheduled = false;
      this.startGroup();
    });
  }

  private startGroup(): void {
    if (this.failure !== null || this.queue.length === 0 || this.inFlight >= this.maxInFlight) return;
    const group = this.queue.shift()!;
    this.inFlight++;
    if (this.queue.length > 0) this.schedule(); // more than one append's worth queued: the next may go in flight too
    void this.appendGroup(group);
  }

  /**
   * Appends `group`; once it lands, the next group is under way before its callers hear (so a
   * cohort split apart stays so, their next commands joining a later group) unless the cohorts
   * are being gathered (then it waits for their turn: see the top).
   */
  private async appendGroup(group: Group): Promise<void> {
    const started = this.pacing.now();
    let offsets: bigint[];
    try {
      const appending = this.append(group.records, group.consumed);
      if (this.startsEarly) this.pacing.handedOver(started);
      offsets = await appending;
    } catch (error) {
      this.inFlight--;
      this.fail(group, error);
      return;
    }
    this.inFlight--;
    if (this.failure !== null)
      this.reportFailure(); // one behind it failed first
    else {
      if (this.startsEarly) this.pacing.appended(started);
      this.startNext();
    }
    group.resolve(offsets);
  }

  /** `group`'s append failed: it and everything queued fail with the first failure's error; the owner hears. */
  private fail(group: Group, error: unknown): void {
    const first = this.failure === null;
    this.failure ??= error;
    if (first) this.owner.failed(error);
    group.reject(error);
    for (const queued of this.queue) queued.reject(error);
    this.queue = [];
    this.reportFailure();
  }

  /** After a group landed: the next one now, or after its callers' turn while gathering. */
  private startNext(): void {
    if (this.startsEarly && !this.pacing.staySplit(this.owner.awaitsIdle())) setImmediate(() => this.startGroup());
    else this.schedule();
  }

  /** The records were built and checked by the queue: appended without the log's argument checks where it offers that (APPEND_BUILT). */
  private append(records: AppendRecord[], consumed: ConsumedOffset | null): Promise<bigint[]> {
    if (consumed !== null) return this.log.append(this.partition, records, { consumed });
    const appendBuilt = this.log[APPEND_BUILT];
    return appendBuilt === undefined ? this.log.append(this.partition, records) : appendBuilt.call(this.log, this.partition, records);
  }

  /** Once the last append in flight has settled, hand the (first) failure to the owner, once. */
  private reportFailure(): void {
    if (this.inFlight > 0 || this.failureReported) return;
    this.failureReported = true;
    this.owner.drained(this.failure);
  }
}

/** A command's own offsets: `count` from `at` of its group's (GroupCommit.write). */
export function offsetsOf(group: readonly bigint[], at: number, count: number): bigint[] {
  return group.slice(at, at + count);
}

function noop(): void {}
