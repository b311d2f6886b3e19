/**
 * Group commit for one partition.
 *
 * Commands decide and fold their events at once (single-threaded, so decisions never
 * race) and then wait here until those events are durable. While one append is in
 * flight, every command arriving queues its records; when the append completes, all
 * queued records go together as the next append: one fsync (file) or one transaction
 * (Kafka) for the whole group. Each command resolves only when the append holding its
 * records has completed.
 *
 * A failed append rejects every command of its group and everything queued behind it
 * (those were decided against a view that assumed the failed group): the owner must
 * rebuild the view from the log before serving the partition again.
 */
import type { AppendRecord, EventLog } from '../log/event-log.ts';

interface Pending {
  records: AppendRecord[];
  resolve: (offsets: bigint[]) => void;
  reject: (error: unknown) => void;
}

export class PartitionWriter {
  private queue: Pending[] = [];
  private flushing: Promise<void> | null = null;
  private failure: unknown = null;
  private lastWrite: Promise<void> = Promise.resolve();

  constructor(
    private readonly log: EventLog,
    private readonly partition: number,
    private readonly onFailure: (error: unknown) => void,
  ) {}

  /** Resolves with the records' offsets once they are durable. */
  write(records: AppendRecord[]): Promise<bigint[]> {
    if (this.failure !== null) return Promise.reject(this.failure);
    const written = new Promise<bigint[]>((resolve, reject) => {
      this.queue.push({ records, resolve, reject });
      this.flushing ??= this.flush();
    });
    this.lastWrite = written.then(noop, noop);
    return written;
  }

  /** Resolves once everything written before the call is durable (or has failed). */
  barrier(): Promise<void> {
    return this.lastWrite;
  }

  private async flush(): Promise<void> {
    await Promise.resolve(); // let commands of this tick join the first group
    while (this.queue.length > 0 && this.failure === null) {
      const group = this.queue;
      this.queue = [];
      await this.appendGroup(group);
    }
    this.flushing = null;
  }

  private async appendGroup(group: Pending[]): Promise<void> {
    try {
      const offsets = await this.log.append(this.partition, group.flatMap((pending) => pending.records));
      let next = 0;
      for (const pending of group) {
        pending.resolve(offsets.slice(next, next + pending.records.length));
        next += pending.records.length;
      }
    } catch (error) {
      this.failure = error;
      for (const pending of [...group, ...this.queue]) pending.reject(error);
      this.queue = [];
      this.onFailure(error);
    }
  }
}

function noop(): void {}
