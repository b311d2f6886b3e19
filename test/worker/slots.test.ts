/**
 * A Worker's slot is held while its handler runs, not while the run's close is being made
 * durable: with concurrency 1, the take of a second entry is sent while the first entry's
 * close is still on its way to the log (a real file log, its first append holding a Closed
 * record gated by wrapping it). Both go in that one append (group-commit.ts: a group starts at
 * the end of the turn), so the second handler starts once it is durable, one datasync for the
 * two; a slot held until the close were durable would send the take in a later append. Never
 * two handlers at once.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { decodeEvent } from '../../src/events/codec.ts';
import type { AppendRecord } from '../../src/log/event-log.ts';
import { openFileLog } from '../../src/log/file/file-log.ts';
import { openRunQueueOnLog } from '../../src/queue/open-run-queue.ts';
import { Worker } from '../../src/worker/worker.ts';
import type { WorkerEvent } from '../../src/worker/types.ts';
import { submitOf } from '../contract/fixtures.ts';
import { onCleanup, scratchDir } from '../support/cleanup.ts';
import { wrapLog } from '../support/wrap-log.ts';

const closes = (records: readonly AppendRecord[]): boolean =>
  records.some((record) => record.value !== null && decodeEvent(record.value).type === 'Closed');

it(
  'a slot is free once its handler settles: the next take goes out while the first close is still on its way to the log',
  { timeout: 120_000 },
  async (t) => {
    const dir = await scratchDir(t, 'runlog-worker-slots-');
    const log = await openFileLog({ dir, partitions: 1 });
    let openGate!: () => void;
    const gate = new Promise<void>((resolve) => (openGate = resolve));
    const held: (readonly AppendRecord[])[] = [];
    const gated = wrapLog(log, {
      append: async (partition: number, records: readonly AppendRecord[]) => {
        if (held.length === 0 && closes(records)) {
          held.push(records);
          await gate;
        }
        return log.append(partition, records);
      },
    });
    const queue = await openRunQueueOnLog(gated);
    onCleanup(t, () => queue.stop());
    const events: WorkerEvent[] = [];
    const worker = new Worker(queue, { concurrency: 1, logger: () => {}, onEvent: (event) => void events.push(event) });
    let active = 0;
    let mostActive = 0;
    const started: string[] = [];
    let secondStarted!: () => void;
    const second = new Promise<void>((resolve) => (secondStarted = resolve));
    worker.handle('build', async ({ entry }) => {
      active++;
      mostActive = Math.max(mostActive, active);
      started.push(entry.thread);
      await new Promise((resolve) => setImmediate(resolve));
      active--;
      if (started.length === 2) secondStarted();
    });
    const first = await queue.submit(submitOf('acme', 'first'));
    const secondTicket = await queue.submit(submitOf('acme', 'second'));
    const stop = new AbortController();
    const running = worker.run(stop.signal);
    onCleanup(t, async () => {
      stop.abort();
      openGate();
      await running;
    });
    while (held.length === 0) await new Promise((resolve) => setImmediate(resolve));
    const typesHeld = held[0]!.map((record) => (record.value === null ? null : decodeEvent(record.value)));
    const heldOf = (type: string): string[] =>
      typesHeld.filter((event) => event?.type === type).map((event) => (event as { entryId: string }).entryId);
    assert.deepEqual(heldOf('Closed'), [first.entryId], 'the held append closes the first entry');
    assert.deepEqual(
      heldOf('Leased'),
      [secondTicket.entryId],
      "the second entry's take went in the same append: sent before the first close was durable",
    );
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.deepEqual(started, ['first'], 'the second handler waits for its lease to be durable');
    assert.deepEqual(
      events.filter((event) => event.type === 'succeeded'),
      [],
      'no close is durable yet',
    );
    openGate();
    await second;
    assert.deepEqual(started, ['first', 'second']);
    await worker.waitIdle();
    assert.equal(events.filter((event) => event.type === 'succeeded').length, 2);
    assert.equal(mostActive, 1, 'never two handlers at once at concurrency 1');
    for (const thread of ['first', 'second']) assert.deepEqual(await queue.openEntries('acme', thread), []);
  },
);
