/**
 * A partition released while it rebuilds, then acquired again: the rebuild begun before the
 * release must not finish later and serve its replay, which is older than what the partition
 * acknowledged since. The file log on real files; a rebuild's replay is held by wrapping the
 * real read: it reads the log up to its end at the call, as a replay does, and hands the
 * records over only once the test lets it (a slow read).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { EventLog, LogRecord, ReadOptions } from '../../src/log/event-log.ts';
import { openFileLog } from '../../src/log/file/file-log.ts';
import { partitionOf } from '../../src/log/partitioner.ts';
import { openRunQueueOnLog } from '../../src/queue/open-run-queue.ts';
import { FakeClock, assertReplayEqualsLive, submitOf } from '../contract/fixtures.ts';
import { onCleanup, scratchDir } from '../support/cleanup.ts';
import { FaultyLog } from './faulty-log.ts';
import { wrapLog } from '../support/wrap-log.ts';

/** Reads made while `hold` is set deliver their records only once `let()` is called for them, in order. */
class HeldReads {
  hold = false;
  readonly #gates: Array<() => void> = [];
  readonly #started: Array<() => void> = [];

  wrap(log: EventLog): EventLog {
    return wrapLog(log, {
      read: (partition: number, from: bigint, options?: ReadOptions) => {
        if (!this.hold) return log.read(partition, from, options);
        this.hold = false;
        const records = collect(log.read(partition, from, options)); // the end is the log's at the call
        const gate = new Promise<void>((resolve) => this.#gates.push(resolve));
        for (const started of this.#started.splice(0)) started();
        return (async function* () {
          const read = await records;
          await gate;
          yield* read;
        })();
      },
    });
  }

  /** Resolves once a held read has been started since the call. */
  started(): Promise<void> {
    return new Promise((resolve) => this.#started.push(resolve));
  }

  /** Lets the oldest held read deliver. */
  let(): void {
    this.#gates.shift()!();
  }
}

async function collect(records: AsyncIterable<LogRecord>): Promise<LogRecord[]> {
  const all: LogRecord[] = [];
  for await (const record of records) all.push(record);
  return all;
}

describe('a partition released while it rebuilds', () => {
  it('serves what it acknowledged after being acquired again, not the replay of the rebuild begun before', async (t) => {
    const log = await openFileLog({ dir: await scratchDir(t, 'runlog-release-rebuild'), partitions: 2 });
    const held = new HeldReads();
    const faulty = new FaultyLog(held.wrap(log));
    const queue = await openRunQueueOnLog(faulty.wrap(), { clock: new FakeClock().read, ownership: 'assigned', onWarning: () => {} });
    onCleanup(t, () => queue.stop());
    let thread = 't0';
    for (let i = 0; partitionOf('acme', thread, 2) !== 0; i++) thread = `t${i}`;
    await queue.acquire(0);
    const first = await queue.submit(submitOf('acme', thread));

    // An append fails: the partition rebuilds, and that rebuild's replay is held.
    held.hold = true;
    let replaying = held.started();
    faulty.failNextAppend = 0;
    await assert.rejects(queue.submit(submitOf('acme', thread)));
    await replaying;
    await queue.release(0);
    await queue.acquire(0);
    const second = await queue.submit(submitOf('acme', thread)); // acknowledged after the held replay read the log

    // Another failure, another rebuild (its replay held too); then the first rebuild's replay arrives.
    held.hold = true;
    replaying = held.started();
    faulty.failNextAppend = 0;
    await assert.rejects(queue.submit(submitOf('acme', thread)));
    await replaying;
    held.let(); // the replay of the rebuild begun before the release: without `second`
    await new Promise((resolve) => setImmediate(resolve));
    held.let();
    while ((await queue.health())[0]!.mode !== 'serving') await new Promise((resolve) => setImmediate(resolve));

    assert.deepEqual(
      (await queue.openEntries('acme', thread)).map((e) => e.entryId),
      [first.entryId, second.entryId],
    );
    await assertReplayEqualsLive(queue);
  });
});
