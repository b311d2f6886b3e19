/**
 * Follows several partitions of a log at once: one `log.tail` per partition, merged as
 * records arrive. Each partition's records come in offset order; across partitions, in
 * whatever order they arrive. Only one `next()` is outstanding per partition, so a slow
 * consumer holds every tail back rather than buffering.
 *
 * Ends when `signal` aborts (every tail ends without error), when a tail ends (the log
 * closed), or when the consumer stops iterating: the partitions' tails are then aborted
 * and awaited, so nothing keeps waiting on the log after the loop is left.
 */
import type { EventLog, LogRecord } from './event-log.ts';

export interface PartitionRecord {
  partition: number;
  record: LogRecord;
}

/** The records of `partitions`, each from `from[i]`, as they are appended. */
export async function* tailAll(
  log: Pick<EventLog, 'tail'>,
  partitions: readonly number[],
  from: readonly bigint[],
  signal: AbortSignal,
): AsyncGenerator<PartitionRecord> {
  const inner = new AbortController();
  const abort = (): void => inner.abort();
  signal.addEventListener('abort', abort, { once: true });
  if (signal.aborted) inner.abort();
  const tails = partitions.map((p, i) => log.tail(p, from[i]!, { signal: inner.signal })[Symbol.asyncIterator]());
  const pending = new Map<number, Promise<{ index: number; result: IteratorResult<LogRecord> }>>();
  const ask = (index: number): void => {
    pending.set(
      index,
      tails[index]!.next().then((result) => ({ index, result })),
    );
  };
  try {
    tails.forEach((_, index) => ask(index));
    while (pending.size === partitions.length && !inner.signal.aborted) {
      const { index, result } = await Promise.race(pending.values());
      pending.delete(index);
      if (result.done) return;
      yield { partition: partitions[index]!, record: result.value };
      ask(index);
    }
  } finally {
    signal.removeEventListener('abort', abort);
    inner.abort();
    // Each tail answers its outstanding next() once aborted; then it can be closed.
    await Promise.allSettled(pending.values());
    await Promise.allSettled(tails.map((tail) => tail.return?.()));
  }
}
