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

interface Pending {
  records: AppendRecord[];
  consumed: ConsumedOffset | null;
  bytes: number;
  resolve: (offsets: bigint[]) => void;
  reject: (error: unknown) => void;
}

/** Who hears of a failed append: first at once, then once nothing is in flight any more. */
export interface GroupCommitOwner {
  failed(error: unknown): void;
  drained(error: unknown): void;
}

export class GroupCommit {
  private queue: Pending[] = [];
  private readonly maxInFlight: number;
  private inFlight = 0;
  private scheduled = false;
  private failure: unknown = null;
  private failureReported = false;
  /** The last write's promise (its caller handles its rejection); barrier() waits for it to settle. */
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
   * Resolves with the records' offsets once they are durable (and `consumed` committed with
   * them, when given). The records must fit one append (record-bounds.ts).
   */
  write(records: AppendRecord[], consumed: ConsumedOffset | null = null): Promise<bigint[]> {
    if (this.failure !== null) return Promise.reject(this.failure);
    const written = new Promise<bigint[]>((resolve, reject) => {
      this.queue.push({ records, consumed, bytes: appendBytes(records), resolve, reject });
      this.schedule();
    });
    this.lastWrite = written;
    return written;
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
    const group = this.takeGroup();
    this.inFlight++;
    if (this.queue.length > 0) this.schedule(); // more than one append's worth queued: the next may go in flight too
    void this.appendGroup(group).finally(() => {
      this.inFlight--;
      if (this.failure === null) this.schedule();
      else this.reportFailure();
    });
  }

  /**
   * The queued commands, oldest first, that fit one append together (always at least one) and consume one group's offsets if any.
   * (Indexed loops here and below, not for...of: in this path the iterators were not optimised away, ~1 KB of garbage per lifecycle.)
   */
  private takeGroup(): Pending[] {
    const queue = this.queue;
    let bytes = 0;
    let taken = 0;
    let consumed: string | null = null;
    for (; taken < queue.length; taken++) {
      const pending = queue[taken]!;
      if (taken > 0 && bytes + pending.bytes > this.log.maxAppendBytes) break;
      const key = pending.consumed === null ? null : consumedKey(pending.consumed);
      if (key !== null && consumed !== null && key !== consumed) break;
      consumed ??= key;
      bytes += pending.bytes;
    }
    if (taken < queue.length) return queue.splice(0, taken);
    this.queue = [];
    return queue;
  }

  private async appendGroup(group: Pending[]): Promise<void> {
    try {
      // A loop, not flatMap: flatMap over many small arrays costs a multiple of it in V8.
      const records: AppendRecord[] = [];
      for (let g = 0; g < group.length; g++) {
        const commandRecords = group[g]!.records;
        for (let r = 0; r < commandRecords.length; r++) records.push(commandRecords[r]!);
      }
      const consumed = highestConsumed(group);
      const offsets = await this.append(records, consumed);
      let next = 0;
      for (let g = 0; g < group.length; g++) {
        const pending = group[g]!;
        pending.resolve(offsets.slice(next, next + pending.records.length));
        next += pending.records.length;
      }
    } catch (error) {
      const first = this.failure === null;
      this.failure ??= error;
      if (first) this.owner.failed(error);
      for (const pending of [...group, ...this.queue]) pending.reject(error);
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

function highestConsumed(group: readonly Pending[]): ConsumedOffset | null {
  let highest: ConsumedOffset | null = null;
  for (let g = 0; g < group.length; g++) {
    const consumed = group[g]!.consumed;
    if (consumed !== null && (highest === null || consumed.offset > highest.offset)) highest = consumed;
  }
  return highest;
}

function noop(): void {}
