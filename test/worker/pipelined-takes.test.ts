/**
 * The pool keeps two takes in flight, each for at most half its slots, so one take's append is
 * made durable while the runs of the other execute (run-loop.ts); it still never runs more
 * handlers than its concurrency, runs every entry once, and stopping mid-take hands back what
 * the late take leased. A real file log (fsync on), the takes counted on their way to the queue.
 */
import assert from 'node:assert/strict';
import { it, type TestContext } from 'node:test';
import { openFileLog } from '../../src/log/file/file-log.ts';
import { openRunQueueOnLog } from '../../src/queue/open-run-queue.ts';
import type { RunQueue } from '../../src/queue/run-queue.ts';
import type { RunQueueApi, StartRequest } from '../../src/queue/types.ts';
import type { WorkerEvent } from '../../src/worker/types.ts';
import { Worker } from '../../src/worker/worker.ts';
import { submitOf } from '../contract/fixtures.ts';
import { onCleanup, runUntilCleanup, scratchDir } from '../support/cleanup.ts';

interface Takes {
  inFlight: number;
  mostInFlight: number;
  asked: number[];
}

/** `queue` as the worker sees it, its takeStarted calls counted (in flight at once, and how many each asked for). */
function countingTakes(queue: RunQueue): { api: RunQueueApi; takes: Takes } {
  const takes: Takes = { inFlight: 0, mostInFlight: 0, asked: [] };
  const takeStarted = async (request: StartRequest): ReturnType<RunQueue['takeStarted']> => {
    takes.asked.push(request.max ?? 1);
    takes.mostInFlight = Math.max(takes.mostInFlight, ++takes.inFlight);
    try {
      return await queue.takeStarted(request);
    } finally {
      takes.inFlight--;
    }
  };
  const api = new Proxy(queue, {
    get(target, property) {
      if (property === 'takeStarted') return takeStarted;
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
  return { api, takes };
}

/** A queue on a real file log holding one entry on each of `count` threads, and a Worker over it whose takes are counted. */
async function pool(t: TestContext, name: string, partitions: number, count: number, concurrency: number) {
  const dir = await scratchDir(t, `runlog-worker-${name}-`);
  const queue = await openRunQueueOnLog(await openFileLog({ dir, partitions }));
  onCleanup(t, () => queue.stop());
  const threads = Array.from({ length: count }, (_, i) => `thread-${i}`);
  for (const thread of threads) await queue.submit(submitOf('acme', thread));
  const { api, takes } = countingTakes(queue);
  const events: WorkerEvent[] = [];
  const worker = new Worker(api, { concurrency, logger: () => {}, onEvent: (event) => void events.push(event) });
  return { queue, threads, takes, events, worker };
}

it(
  'two takes in flight, each for half the slots; never more handlers than the concurrency, each entry run once',
  { timeout: 120_000 },
  async (t) => {
    const { queue, threads, takes, events, worker } = await pool(t, 'pipelined', 2, 120, 8);
    let active = 0;
    let mostActive = 0;
    const ran: string[] = [];
    worker.handle('build', async ({ entry }) => {
      mostActive = Math.max(mostActive, ++active);
      ran.push(entry.thread);
      await new Promise((resolve) => setImmediate(resolve));
      active--;
    });
    runUntilCleanup(t, worker);
    await worker.waitIdle();
    assert.equal(takes.mostInFlight, 2, 'a second take is sent while the first is in flight');
    assert.ok(
      takes.asked.every((max) => max >= 1 && max <= 4),
      `each take asks for at most half of 8 slots: ${takes.asked.join(' ')}`,
    );
    assert.ok(mostActive <= 8, `never more than 8 handlers at once (saw ${mostActive})`);
    assert.deepEqual([...ran].sort(), [...threads].sort(), 'every entry ran exactly once');
    assert.equal(events.filter((event) => event.type === 'succeeded').length, threads.length);
    for (const thread of threads.slice(0, 10)) assert.deepEqual(await queue.openEntries('acme', thread), []);
  },
);

it(
  'stopping while a take is in flight: the entries it leased are handed back, not run, and run by the next worker',
  { timeout: 120_000 },
  async (t) => {
    const { queue, threads, takes, events, worker: first } = await pool(t, 'pipelined-stop', 1, 40, 4);
    const stop = new AbortController();
    const ranFirst: string[] = [];
    first.handle('build', ({ entry }) => {
      ranFirst.push(entry.thread);
      // The worker stops from inside its first handler: a take sent before is still in flight.
      if (ranFirst.length === 1) stop.abort();
    });
    await first.run(stop.signal);
    assert.ok(takes.asked.length >= 2, 'a second take was sent before the stop');
    const deferred = events.filter((event) => event.type === 'deferred').length;
    assert.ok(deferred >= 1, 'what the late take leased is handed back');
    // A second worker runs everything left, and nothing ran twice.
    const second = new Worker(queue, { concurrency: 4, logger: () => {} });
    const ranSecond: string[] = [];
    second.handle('build', ({ entry }) => void ranSecond.push(entry.thread));
    const stopSecond = new AbortController();
    const runningSecond = second.run(stopSecond.signal);
    await second.waitIdle();
    stopSecond.abort();
    await runningSecond;
    const succeeded = events.filter((event) => event.type === 'succeeded').map((event) => (event as { entryId: string }).entryId);
    assert.equal(succeeded.length + ranSecond.length, threads.length, 'each entry closed once: by the first worker or run by the second');
    for (const thread of threads) assert.deepEqual(await queue.openEntries('acme', thread), []);
  },
);
