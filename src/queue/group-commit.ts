/**
 * Group commit for one partition of the queue: many commands' records, one append.
 *
 * Commands decide and fold their events at once (single-threaded, so decisions never
 * race) and then wait here until those events are durable. Every command arriving in the
 * same turn of the event loop joins one group, and a group is one append: one fsync (file)
 * or one transaction (Kafka) for all of it. Each command resolves only when the append
 * holding its records has completed.
 *
 * WHEN A GROUP STARTS. With no append in flight, a group starts at the end of the turn
 * (setImmediate), not a microtask after its first command: the commands that command's own
 * microtasks make join it. The one that matters is a Worker's take, woken by a submission
 * (partition.ts #wakeSoon): started a microtask later, the submission's group left without
 * it, and its handler waited for two datasyncs one after the other instead of one
 * (submit-to-handler p50 1.5-2.1 ms against 1.0-1.6 ms at 10,000 submissions a second, 2026-12-06).
 * The same holds when an append completes: the commands its callers make as they go on join
 * the group queued behind it. With an append in flight (Kafka pipelines them), the next
 * group may start a microtask later, as before.
 *
 * How many appends are in flight at once is the log's call (EventLog.appendsInFlight).
 * The file log fsyncs one group at a time, so while one append is in flight every command
 * arriving queues here and goes in the next group. Kafka pipelines transactions, so groups
 * go to it at once, up to its bound, and it coalesces what queues behind its open
 * transactions.
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
import { emptyList } from '../plain-objects.ts';
import { APPEND_BUILT, appendBytes, consumedKey, type AppendRecord, type ConsumedOffset, type EventLog } from '../log/event-log.ts';

/**
 * A group: the records of the commands that joined it, in order, appended as one. Formed as
 * commands write (a command joins the last unstarted group if its records fit beside the
 * others' and it consumes no other offsets), so a command costs no promise of its own: every
 * command of a group awaits the group's one promise and finds its offsets at its index.
 * Made by `new`, its records' array too, not by literals: it holds its commands' records until
 * they are durable, and V8 may pretenure a literal after a backlog (src/plain-objects.ts).
 */
class Group {
  readonly records: AppendRecord[] = emptyList();
  bytes = 0;
  /** The highest offset its commands consumed, and whose it is (consumedKey), if any. */
  consumed: ConsumedOffset | null = null;
  consumedKey: string | null = null;
  /** Resolves with the offsets of all its records once they are durable. */
  readonly durable: Promise<readonly bigint[]>;
  resolve!: (offsets: readonly bigint[]) => void;
  reject!: (error: unknown) => void;

  constructor() {
    this.durable = new Promise<readonly bigint[]>((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
  }
}

/** Where a command's records went: its group's offsets, once durable, hold theirs from `at` on. */
export interface Written {
  durable: Promise<readonly bigint[]>;
  at: number;
}

/** Who hears of a failed append: first at once, then once nothing is in flight any more. */
export interface GroupCommitOwner {
  failed(error: unknown): void;
  drained(error: unknown): void;
}

export class GroupCommit {
  /** Groups not started yet, oldest first; commands join the last. */
  private queue: Group[] = [];
  private readonly maxInFlight: number;
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
  ) {
    this.maxInFlight = Math.max(1, log.appendsInFlight ?? 1);
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
    this.schedule();
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
    const group = new Group();
    this.queue.push(group);
    return group;
  }

  /** Resolves once everything written before the call is durable (or has failed). */
  barrier(): Promise<void> {
    return this.lastWrite.then(noop, noop);
  }

  /** Resolves once everything written so far is durable; rejects with the failure if an append failed. */
  durableSoFar(): Promise<void> {
    return this.failure !== null ? Promise.reject(this.failure) : this.lastWrite.then(noop);
  }

  /** Starts the next group at the end of this turn (none in flight) or a microtask from now (see WHEN A GROUP STARTS). */
  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    if (this.inFlight === 0) setImmediate(this.scheduledStart);
    else queueMicrotask(this.scheduledStart);
  }

  /** What schedule() runs: made once, not a closure per group. */
  private readonly scheduledStart = (): void => {
    this.scheduled = false;
    this.startGroup();
  };

  private startGroup(): void {
    if (this.failure !== null || this.queue.length === 0 || this.inFlight >= this.maxInFlight) return;
    const group = this.queue.shift()!;
    this.inFlight++;
    if (this.queue.length > 0) this.schedule(); // more than one append's worth queued: the next may go in flight too
    void this.appendGroup(group).finally(() => {
      this.inFlight--;
      if (this.failure === null) this.schedule();
      else this.reportFailure();
    });
  }

  private async appendGroup(group: Group): Promise<void> {
    try {
      group.resolve(await this.append(group.records, group.consumed));
    } catch (error) {
      const first = this.failure === null;
      this.failure ??= error;
      if (first) this.owner.failed(error);
      group.reject(error);
      for (const queued of this.queue) queued.reject(error);
      this.queue = [];
    }
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
