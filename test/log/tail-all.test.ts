/**
 * tailAll: every partition's tail merged, each partition in offset order, from where each
 * was asked to start, following appends; it ends when the signal aborts and when the
 * consumer stops iterating, and either way every partition's tail has ended after it.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { EventLog, LogRecord } from '../../src/log/event-log.ts';
import { openMemoryLog } from '../../src/log/memory/memory-log.ts';
import { tailAll, type PartitionRecord } from '../../src/log/tail-all.ts';
import { wrapLog } from '../support/wrap-log.ts';
import { collect, rec, text } from '../contract/log-records.ts';

/** The log with its tails counted: `open` is how many have started and not yet ended. */
function countedTails(log: EventLog) {
  const counter = { open: 0 };
  const counted = wrapLog(log, {
    tail: (partition, from, options) =>
      (async function* (): AsyncGenerator<LogRecord> {
        counter.open++;
        try {
          yield* log.tail(partition, from, options);
        } finally {
          counter.open--;
        }
      })(),
  });
  return { log: counted, counter };
}

describe('tailAll', () => {
  it('merges the partitions, each in offset order from its own start, and follows appends', async () => {
    const memory = await openMemoryLog({ partitions: 3 });
    for (const p of [0, 1, 2]) await memory.append(p, [rec('k', `${p}-a`), rec('k', `${p}-b`)]);
    const { log, counter } = countedTails(memory);
    const stop = new AbortController();
    const seen: PartitionRecord[] = [];
    const reading = (async () => {
      for await (const item of tailAll(log, [0, 2], [1n, 0n], stop.signal)) {
        seen.push(item);
        if (seen.length === 5) stop.abort(); // the three there, then the two appended
      }
    })();
    await memory.append(2, [rec('k', '2-c')]);
    await memory.append(0, [rec('k', '0-c')]);
    await reading;
    const of = (p: number): (string | null)[] => seen.filter((item) => item.partition === p).map((item) => text(item.record));
    assert.deepEqual(of(0), ['0-b', '0-c']);
    assert.deepEqual(of(2), ['2-a', '2-b', '2-c']);
    assert.equal(of(1).length, 0, 'a partition not asked for is not read');
    assert.equal(counter.open, 0, 'every tail ended with the signal');
  });

  it('a consumer that stops early ends every tail', async () => {
    const memory = await openMemoryLog({ partitions: 2 });
    await memory.append(0, [rec('k', 'a'), rec('k', 'b')]);
    const { log, counter } = countedTails(memory);
    const never = new AbortController().signal;
    for await (const item of tailAll(log, [0, 1], [0n, 0n], never)) {
      assert.equal(counter.open, 2);
      assert.equal(text(item.record), 'a');
      break;
    }
    assert.equal(counter.open, 0);
  });

  it('ends at once on a signal already aborted, and when the log closes', async () => {
    const memory = await openMemoryLog({ partitions: 2 });
    const aborted = AbortSignal.abort();
    assert.deepEqual(await collect(tailAll(memory, [0, 1], [0n, 0n], aborted)), []);
    const reading = collect(tailAll(memory, [0, 1], [0n, 0n], new AbortController().signal));
    await memory.close();
    assert.deepEqual(await reading, []);
  });
});
