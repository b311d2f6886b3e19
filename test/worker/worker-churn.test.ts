/**
 * Hostile test of the Worker's pool under churn (take-ahead, hand-back, lease keeping): two
 * Workers over one queue on a real file log, short leases, handlers that answer at once
 * (the pool then takes ahead), a little later, or after longer than the lease (kept by the
 * lease keeper), and the Workers stopped and replaced again and again while entries wait in
 * their pools. Every entry ends closed succeeded, exactly once, with the result of a run that
 * happened; no handler starts for an entry after a Worker was told its close is durable; and a
 * run handed back (stopped, or waited too long for a slot) is run again later.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { openFileLog } from '../../src/log/file/file-log.ts';
import { openRunQueueOnLog } from '../../src/queue/open-run-queue.ts';
import type { HandlerContext, WorkerEvent } from '../../src/worker/types.ts';
import { Worker } from '../../src/worker/worker.ts';
import { onCleanup, scratchDir } from '../support/cleanup.ts';

const ENTRIES = 600;
const THREADS = 60;
const LEASE_MS = 300;

/** 0..99 from an entry id and attempt: which kind of handler this run is. */
function roll(entryId: string, attempt: number): number {
  let hash = attempt * 7919;
  for (let i = 0; i < entryId.length; i++) hash = (Math.imul(hash, 31) + entryId.charCodeAt(i)) | 0;
  return Math.abs(hash) % 100;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

it(
  'two Workers stopped and replaced again and again: every entry closed once, nothing run after its durable close',
  { timeout: 300_000 },
  async (t) => {
    const dir = await scratchDir(t, 'runlog-worker-churn-');
    const queue = await openRunQueueOnLog(await openFileLog({ dir, partitions: 2 }));
    onCleanup(t, () => queue.stop());
    const ids: Array<[string, string]> = [];
    for (let i = 0; i < ENTRIES; i++) {
      const ticket = await queue.submit({ tenant: 'acme', thread: `t${i % THREADS}`, agent: 'build', input: `w${i}` });
      ids.push(['acme', ticket.entryId]);
    }
    /** Entry id -> results of the runs that returned (one per run). */
    const results = new Map<string, string[]>();
    /** Entries a Worker was told are closed durably (a succeeded event). */
    const closed = new Set<string>();
    const violations: string[] = [];
    let runs = 0;
    /** A run: noted (a violation if its entry's close was durable already) and its result kept once it returns. */
    const ran = (entryId: string, attempt: number): string => {
      if (closed.has(entryId)) violations.push(`${entryId} run again (attempt ${attempt}) after its durable close`);
      return `run ${++runs} of ${entryId}`;
    };
    const returned = (entryId: string, result: string): string => {
      results.set(entryId, [...(results.get(entryId) ?? []), result]);
      return result;
    };
    // Most handlers answer in their turn (the pool then takes ahead), some a little later, some after longer than the lease.
    const handler = (context: HandlerContext): string | Promise<string> => {
      const { entryId } = context.entry;
      const result = ran(entryId, context.attempt);
      const kind = roll(entryId, context.attempt);
      if (kind < 70) return returned(entryId, result);
      const ms = kind >= 90 ? LEASE_MS + 100 + kind * 3 : kind % 20;
      return sleep(ms).then(() => returned(entryId, result));
    };
    const onEvent = (event: WorkerEvent): void => {
      if (event.type === 'succeeded') {
        if (closed.has(event.entryId)) violations.push(`${event.entryId} closed twice`);
        closed.add(event.entryId);
      }
    };
    const start = (n: number) => {
      const worker = new Worker(queue, { concurrency: 3 + (n % 3), leaseMs: LEASE_MS, holder: `w${n}`, logger: () => {}, onEvent });
      worker.handle('build', handler);
      const stop = new AbortController();
      return { worker, stop, running: worker.run(stop.signal) };
    };
    let workers = [start(0), start(1)];
    for (let n = 2; n < 14; n++) {
      await sleep(120 + (n % 4) * 60);
      const [old, other] = workers as [ReturnType<typeof start>, ReturnType<typeof start>];
      old.stop.abort();
      await old.running;
      workers = [other, start(n)];
    }
    await Promise.all(workers.map((w) => w.worker.waitIdle()));
    for (const w of workers) w.stop.abort();
    await Promise.all(workers.map((w) => w.running));

    assert.deepEqual(violations, []);
    for (const [tenant, entryId] of ids) {
      const entry = await queue.entry(tenant, entryId);
      assert.equal(entry.outcome, 'succeeded', `${entryId} closed succeeded`);
      const result = new TextDecoder().decode(entry.result ?? new Uint8Array());
      assert.ok(results.get(entryId)?.includes(result), `${entryId}'s result ${result} is one a run returned`);
    }
    assert.equal(closed.size, ENTRIES, 'each entry closed once, by a Worker told so');
    const again = [...results.values()].filter((list) => list.length > 1).length;
    t.diagnostic(`${runs} runs for ${ENTRIES} entries; ${again} entries run more than once (handed back, or a lease lost)`);
  },
);
