/**
 * A Worker's slot is held while its handler runs, not while the run's close is being made
 * durable: with concurrency 1, a second entry's handler starts while the first entry's close
 * is still held back on its way to the log (a real file log, its appends of Closed records
 * gated by wrapping it), and never two handlers at once.
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
  'a slot is free once its handler settles: the next handler starts while the first close is still on its way to the log',
  { timeout: 120_000 },
  async (t) => {
    const dir = await scratchDir(t, 'runlog-worker-slots-');
    const log = await openFileLog({ dir, partitions: 1 });
    let openGate!: () => void;
    const gate = new Promise<void>((resolve) => (openGate = resolve));
    let heldCloses = 0;
    const gated = wrapLog(log, {
      append: async (partition: number, records: readonly AppendRecord[]) => {
        if (closes(records)) {
          heldCloses++;
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
    await queue.submit(submitOf('acme', 'first'));
    await queue.submit(submitOf('acme', 'second'));
    const stop = new AbortController();
    const running = worker.run(stop.signal);
    onCleanup(t, async () => {
      stop.abort();
      openGate();
      await running;
    });
    await second;
    assert.deepEqual(started, ['first', 'second']);
    assert.ok(heldCloses >= 1, 'the first close was held at the log');
    assert.deepEqual(
      events.filter((event) => event.type === 'succeeded'),
      [],
      'no close is durable yet',
    );
    openGate();
    await worker.waitIdle();
    assert.equal(events.filter((event) => event.type === 'succeeded').length, 2);
    assert.equal(mostActive, 1, 'never two handlers at once at concurrency 1');
    for (const thread of ['first', 'second']) assert.deepEqual(await queue.openEntries('acme', thread), []);
  },
);
