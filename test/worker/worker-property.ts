/**
 * Property: under any schedule of submissions, handler successes and failures, worker
 * stops and restarts, two workers on one queue never run two entries of one thread at
 * once, run each thread's entries in submission order, close no entry twice, and end with
 * every entry succeeded or parked.
 */
import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import fc from 'fast-check';
import type { HandlerContext } from '../../src/worker/types.ts';
import type { Worker } from '../../src/worker/worker.ts';
import { allEvents, submitOf } from '../contract/fixtures.ts';
import { deferred, turns, workerOn, type WorkerBackend, type RunningWorker, type WorkerFixture } from './fixtures.ts';

type Action =
  | { kind: 'submit'; thread: number }
  | { kind: 'finish'; pick: number; ok: boolean }
  | { kind: 'restart'; worker: number }
  | { kind: 'turns'; n: number };

const actionArb: fc.Arbitrary<Action> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('submit' as const), thread: fc.integer({ min: 0, max: 2 }) }) },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('finish' as const), pick: fc.nat(), ok: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('restart' as const), worker: fc.integer({ min: 0, max: 1 }) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('turns' as const), n: fc.integer({ min: 1, max: 5 }) }) },
);

interface Blocked {
  thread: string;
  release: (ok: boolean) => void;
}

/** The handlers' shared view of what runs: detects overlap on a thread and records start order. */
class Observed {
  readonly active = new Set<string>();
  readonly blocked: Blocked[] = [];
  readonly starts: string[] = [];
  violations: string[] = [];
  private started = deferred();

  nextStart(): Promise<void> {
    return this.started.promise;
  }

  readonly handler = async ({ entry, input, signal }: HandlerContext): Promise<string> => {
    const thread = entry.thread;
    if (this.active.has(thread)) this.violations.push(`two runs on ${thread} at once`);
    this.active.add(thread);
    this.starts.push(new TextDecoder().decode(input));
    const gate = deferred<boolean>();
    const blocked = { thread, release: gate.resolve };
    this.blocked.push(blocked);
    this.started.resolve();
    this.started = deferred();
    const onAbort = (): void => gate.reject(signal.reason);
    if (signal.aborted) onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      if (!(await gate.promise)) throw new Error('failed on purpose');
      return 'ok';
    } finally {
      signal.removeEventListener('abort', onAbort);
      this.blocked.splice(this.blocked.indexOf(blocked), 1);
      this.active.delete(thread);
    }
  };
}

function startWorker(fx: WorkerFixture, observed: Observed): { worker: Worker; run: RunningWorker } {
  const { worker, start } = fx.worker({ concurrency: 2, backoff: () => 0, leaseMs: 3_600_000 });
  worker.handle('build', observed.handler);
  return { worker, run: start() };
}

async function drain(workers: { worker: Worker }[], observed: Observed): Promise<void> {
  for (;;) {
    for (const blocked of [...observed.blocked]) blocked.release(true);
    const idle = Promise.all(workers.map(({ worker }) => worker.waitIdle())).then(() => 'idle' as const);
    if ((await Promise.race([idle, observed.nextStart().then(() => 'started' as const)])) === 'idle') return;
  }
}

async function check(fx: WorkerFixture, observed: Observed, submitted: Map<string, number>): Promise<void> {
  assert.deepEqual(observed.violations, []);
  const events = await allEvents(fx.local.log);
  const closes = new Map<string, number>();
  for (const event of events) if (event.type === 'Closed') closes.set(event.entryId, (closes.get(event.entryId) ?? 0) + 1);
  const submissions = events.filter((event) => event.type === 'Submitted');
  assert.equal(
    submissions.length,
    [...submitted.values()].reduce((a, b) => a + b, 0),
  );
  for (const submission of submissions) assert.equal(closes.get(submission.entryId), 1, `entry ${submission.entryId} closed once`);
  for (const thread of submitted.keys()) {
    const order = observed.starts.filter((s) => s.startsWith(`${thread}#`)).map((s) => Number(s.split('#')[1]));
    assert.deepEqual(
      order,
      [...order].sort((a, b) => a - b),
      `thread ${thread} ran in order: ${order}`,
    );
  }
}

export async function perThreadProperty(backend: WorkerBackend, numRuns = 15): Promise<void> {
  await fc.assert(
    fc.asyncProperty(fc.array(actionArb, { minLength: 1, maxLength: 30 }), async (actions) => {
      const hooks: (() => Promise<void> | void)[] = [];
      const scope = { after: (hook: () => Promise<void> | void) => void hooks.push(hook) } as unknown as TestContext;
      try {
        const fx = await workerOn(backend, scope);
        const observed = new Observed();
        const workers = [startWorker(fx, observed), startWorker(fx, observed)];
        const submitted = new Map<string, number>();
        for (const action of actions) {
          if (action.kind === 'submit') {
            const thread = `t${action.thread}`;
            const n = submitted.get(thread) ?? 0;
            submitted.set(thread, n + 1);
            await fx.queue.submit(submitOf('acme', thread, { input: `${thread}#${n}`, maxAttempts: 3 }));
          } else if (action.kind === 'finish') {
            observed.blocked[action.pick % Math.max(1, observed.blocked.length)]?.release(action.ok);
          } else if (action.kind === 'restart') {
            await workers[action.worker]!.run.stop();
            workers[action.worker] = startWorker(fx, observed);
          } else {
            await turns(action.n);
          }
        }
        await drain(workers, observed);
        await check(fx, observed, submitted);
        for (const { run } of workers) await run.stop();
      } catch (error) {
        if (process.env.DEBUG_PROPERTY) console.error(error);
        throw error;
      } finally {
        for (const hook of hooks) await hook();
      }
    }),
    { numRuns },
  );
}
