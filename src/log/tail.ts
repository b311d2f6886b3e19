/**
 * The tail of a log that lives in this process (memory/, file/): read up to the end, wait
 * for the next append, read on from where the last record ended. Kafka tails with its own
 * consumer (kafka/partition-reader.ts).
 *
 * Compaction leaves holes: after reading up to the end taken before the read, the tail goes
 * on from that end even if the records just below it were compacted away. A tail ends,
 * without error, when its signal aborts or the log closes (close wakes every waiter).
 */
import type { LogRecord } from './event-log.ts';

/** What a tail follows: one partition of an in-process log. */
export interface TailSource {
  /** The offset the next appended record gets; read() stops there. */
  endOffset(): bigint;
  /** The records from `from` up to the end at the call. */
  read(from: bigint): AsyncIterable<LogRecord>;
  /** Resolves once a record at or after `offset` is there, the signal aborts, or the log closes. */
  appended(offset: bigint, signal: AbortSignal): Promise<void>;
  closed(): boolean;
}

/** The records of `source` from `from` on, as they are appended, until the signal aborts or the log closes. */
export async function* tailRecords(source: TailSource, from: bigint, signal: AbortSignal): AsyncGenerator<LogRecord> {
  let next = from;
  while (!signal.aborted && !source.closed()) {
    const end = source.endOffset();
    for await (const record of source.read(next)) {
      if (signal.aborted) return;
      next = record.offset + 1n;
      yield record;
    }
    if (end > next) next = end; // skip holes left by compaction
    await source.appended(next, signal);
  }
}

/** Those waiting for a partition to grow (tails; the file log's reached recorder). */
export class AppendWaiters {
  readonly #waiters = new Set<() => void>();

  /** Resolves at once if `end` is past `offset` or the signal aborted; else at the next wakeAll() or abort. */
  wait(offset: bigint, end: bigint, signal: AbortSignal): Promise<void> {
    if (end > offset || signal.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const done = (): void => {
        this.#waiters.delete(done);
        signal.removeEventListener('abort', done);
        resolve();
      };
      this.#waiters.add(done);
      signal.addEventListener('abort', done, { once: true });
    });
  }

  /** Wakes every waiter: after an append, and at close. */
  wakeAll(): void {
    const waiters = [...this.#waiters];
    this.#waiters.clear();
    for (const wake of waiters) wake();
  }
}
