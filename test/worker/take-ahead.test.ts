/**
 * Taking ahead (run-loop.ts): once the last `concurrency` handlers each settled in the turn
 * they were called, the pool's takes also lease entries beyond its free slots, which wait in
 * the pool for a slot. Never more handlers than the concurrency; each entry run once; an
 * entry that waited a quarter of its lease or more is handed back (deferred) instead of run,
 * and runs later; one that waited less runs. A real file log (fsync on), the store clock fake.
 */
import assert from 'node:assert/strict';
import { it, type TestContext } from 'node:test';
import { openFileLog } from '../../src/log/file/file-log.ts';
import { openRunQueueOnLog } from '../../src/queue/open-run-queue.ts';
import type { RunQueue } from '../../src/queue/run-queue.ts';
import type { WorkerEvent } from '../../src/worker/types.ts';
import { QUICK_HANDLER_MS } from '../../src/worker/supervise.ts';
import { Worker } from '../../src/worker/worker.ts';
import { FakeClock, submitOf } from '../contract/fixtures.ts';
import { onCleanup, runUntilCleanup, scratchDir } from '../support/cleanup.ts';

const LEASE_MS = 1_000;

interface Scene {
  queue: RunQueue;
  clock: FakeClock;
  events: WorkerEvent[];
  /** Threads whose handler was called, in order. */
  ran: string[];
  mostActive: () => number;
  /** Resolves once both slow handlers are running. */
  slowRunning: Promise<void>;
  releaseSlow: () => void;
  worker: Worker;
}

/**
 * Concurrency 2. Threads quick-1, quick-2 (handlers that return at once: the pool then takes
 * ahead), slow-1, slow-2 (handlers that hold both slots until released), then ahead-1, ahead-2
 * (quick), all submitted before the worker runs: ahead-1 and ahead-2 are leased while the
 * slow handlers hold the slots, and wait.
 */
async function scene(t: TestContext): Promise<Scene> {
  const dir = await scratchDir(t, 'runlog-worker-ahead-');
  const clock = new FakeClock();
  const queue = await openRunQueueOnLog(await openFileLog({ dir, partitions: 1 }), { clock: clock.read });
  onCleanup(t, () => queue.stop());
  for (const thread of ['quick-1', 'quick-2', 'slow-1', 'slow-2', 'ahead-1', 'ahead-2']) await queue.submit(submitOf('acme', thread));
  const events: WorkerEvent[] = [];
  const worker = new Worker(queue, { concurrency: 2, leaseMs: LEASE_MS, logger: () => {}, onEvent: (event) => void events.push(event) });
  const ran: string[] = [];
  let active = 0;
  let mostActive = 0;
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let slowStarted = 0;
  let bothSlow!: () => void;
  const slowRunning = new Promise<void>((resolve) => (bothSlow = resolve));
  worker.handle('build', ({ entry }) => {
    ran.push(entry.thread);
    mostActive = Math.max(mostActive, ++active);
    if (!entry.thread.startsWith('slow-')) {
      active--;
      return undefined;
    }
    if (++slowStarted === 2) bothSlow();
    return released.then(() => {
      active--;
    });
  });
  runUntilCleanup(t, worker, release);
  return { queue, clock, events, ran, mostActive: () => mostActive, slowRunning, releaseSlow: release, worker };
}

/** Polls until `check` holds (the takes and their appends run on their own). */
async function until(check: () => Promise<boolean>, what: string): Promise<void> {
  for (let tries = 0; !(await check()); tries++) {
    if (tries > 2_000) assert.fail(`never: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

async function leased(queue: RunQueue, thread: string): Promise<boolean> {
  const [entry] = await queue.openEntries('acme', thread);
  return entry?.lease !== null && entry?.lease !== undefined;
}

function outcomes(events: readonly WorkerEvent[], entryIds: ReadonlyMap<string, string>): Record<string, string[]> {
  const byThread: Record<string, string[]> = {};
  for (const event of events) {
    if (!('entryId' in event)) continue;
    const thread = entryIds.get(event.entryId)!;
    (byThread[thread] ??= []).push(event.type);
  }
  return byThread;
}

async function entryIdsOf(queue: RunQueue, threads: readonly string[]): Promise<Map<string, string>> {
  const ids = new Map<string, string>();
  for (const thread of threads) {
    const [entry] = await queue.openEntries('acme', thread);
    if (entry !== undefined) ids.set(entry.entryId, thread);
  }
  return ids;
}

const THREADS = ['quick-1', 'quick-2', 'slow-1', 'slow-2', 'ahead-1', 'ahead-2'];

it('quick handlers: entries are taken ahead of free slots and wait; each runs once, never more handlers than the concurrency', async (t) => {
  const s = await scene(t);
  const ids = await entryIdsOf(s.queue, THREADS);
  await s.slowRunning;
  await until(async () => (await leased(s.queue, 'ahead-1')) && (await leased(s.queue, 'ahead-2')), 'ahead-1 and ahead-2 leased');
  assert.deepEqual(s.ran.sort(), ['quick-1', 'quick-2', 'slow-1', 'slow-2'], 'taken ahead, not run: both slots are held');
  s.releaseSlow();
  await s.worker.waitIdle();
  assert.deepEqual(s.ran.sort(), [...THREADS].sort(), 'every entry ran exactly once');
  assert.ok(s.mostActive() <= 2, `never more than 2 handlers at once (saw ${s.mostActive()})`);
  const byThread = outcomes(s.events, ids);
  for (const thread of THREADS) assert.deepEqual(byThread[thread], ['succeeded'], thread);
  for (const thread of THREADS) assert.deepEqual(await s.queue.openEntries('acme', thread), []);
});

it('an entry that waited a quarter of its lease for a slot is handed back, not run then; it runs once later', async (t) => {
  const s = await scene(t);
  const ids = await entryIdsOf(s.queue, THREADS);
  await s.slowRunning;
  await until(async () => (await leased(s.queue, 'ahead-1')) && (await leased(s.queue, 'ahead-2')), 'ahead-1 and ahead-2 leased');
  s.clock.advance(LEASE_MS / 4);
  s.releaseSlow();
  await s.worker.waitIdle();
  const byThread = outcomes(s.events, ids);
  for (const thread of ['ahead-1', 'ahead-2']) assert.deepEqual(byThread[thread], ['deferred', 'succeeded'], thread);
  for (const thread of ['quick-1', 'quick-2', 'slow-1', 'slow-2']) assert.deepEqual(byThread[thread], ['succeeded'], thread);
  assert.deepEqual(s.ran.sort(), [...THREADS].sort(), 'every entry ran exactly once: the handed-back ones only after');
  for (const thread of ['ahead-1', 'ahead-2']) {
    const entry = (await s.queue.entry('acme', [...ids].find(([, name]) => name === thread)![0])) as {
      attempts: unknown[];
      deferredAttempts: number;
    };
    assert.equal(entry.deferredAttempts, 1, `${thread}: its first attempt was handed back, not failed`);
    assert.equal(entry.attempts.length, 2, `${thread}: leased ahead (attempt 1, handed back), then run (attempt 2)`);
  }
});

it('handlers that answer in their turn but hold the thread (a blocking computation) are not quick: nothing is taken ahead', async (t) => {
  const dir = await scratchDir(t, 'runlog-worker-blocking-');
  const clock = new FakeClock();
  const queue = await openRunQueueOnLog(await openFileLog({ dir, partitions: 1 }), { clock: clock.read });
  onCleanup(t, () => queue.stop());
  const threads = Array.from({ length: 12 }, (_, i) => `blocking-${i}`);
  for (const thread of threads) await queue.submit(submitOf('acme', thread));
  const worker = new Worker(queue, { concurrency: 2, leaseMs: LEASE_MS, logger: () => {} });
  let mostLeased = 0;
  worker.handle('build', () => {
    // Leased now: the running entries and any taken ahead, waiting for a slot (the store clock is fake: no lease runs out).
    let leasedNow = 0;
    for (const entry of queue.views()[0]!.entries.values()) if (entry.lease !== null) leasedNow++;
    mostLeased = Math.max(mostLeased, leasedNow);
    const until = performance.now() + 5 * QUICK_HANDLER_MS;
    while (performance.now() < until); // holds the thread
    return 'done';
  });
  runUntilCleanup(t, worker, () => {});
  await worker.waitIdle();
  for (const thread of threads) assert.deepEqual(await queue.openEntries('acme', thread), [], `${thread} ran`);
  // Taken ahead, an entry waited behind the blocking handlers, and one cancelled meanwhile was still started.
  assert.ok(mostLeased <= 2, `at most the 2 running entries leased at once (saw ${mostLeased})`);
});
