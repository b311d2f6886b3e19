/**
 * A take's answer that reaches the Worker late: its process stalled between sending the take
 * and reading the answer (a pause, a long collection), or the network held it. Meanwhile the
 * lease ran out and another worker took the entry and finished it. The Worker must not start
 * the handler then (the hostile tester: a Worker paused just after its take was committed ran
 * the handler 0.4–1.5 s after the other worker's close was acknowledged, 12 of 12). A real file
 * log and a real queue, the store clock fake: the queue is wrapped so that its first
 * takeStarted's answer is handed over only after the clock moved and the other worker closed.
 */
import assert from 'node:assert/strict';
import { it, type TestContext } from 'node:test';
import { openFileLog } from '../../src/log/file/file-log.ts';
import { openRunQueueOnLog } from '../../src/queue/open-run-queue.ts';
import type { StartRequest } from '../../src/queue/types.ts';
import type { WorkerEvent } from '../../src/worker/types.ts';
import { Worker } from '../../src/worker/worker.ts';
import { FakeClock, submitOf } from '../contract/fixtures.ts';
import { wrapQueue } from '../server/fixtures.ts';
import { onCleanup, runUntilCleanup, scratchDir } from '../support/cleanup.ts';

const LEASE_MS = 1_000;

/** A Worker whose first take's answer comes `lateMs` (store clock) after it was asked for; with `finishedMeanwhile`, another worker took the entry and closed it by then. */
async function lateAnswer(t: TestContext, lateMs: number, finishedMeanwhile: boolean) {
  const dir = await scratchDir(t, 'runlog-worker-late-');
  const clock = new FakeClock();
  const queue = await openRunQueueOnLog(await openFileLog({ dir, partitions: 1 }), { clock: clock.read });
  onCleanup(t, () => queue.stop());
  const ticket = await queue.submit(submitOf('acme', 'only'));
  let first = true;
  const late = wrapQueue(queue, {
    takeStarted: async (request: StartRequest) => {
      const answer = await queue.takeStarted(request);
      if (!first || answer.length === 0) return answer;
      first = false;
      clock.advance(lateMs);
      if (finishedMeanwhile) {
        const [other] = await queue.takeStarted({ agents: ['build'], holder: 'other', ttlMs: LEASE_MS });
        assert.ok(other !== undefined, 'the lease ran out: the other worker takes the entry');
        await queue.close(other.lease, { status: 'succeeded', result: 'by the other' });
      }
      return answer;
    },
  });
  const events: WorkerEvent[] = [];
  const worker = new Worker(late, { concurrency: 1, leaseMs: LEASE_MS, logger: () => {}, onEvent: (event) => void events.push(event) });
  const handled: number[] = [];
  worker.handle('build', ({ attempt }) => void handled.push(attempt));
  runUntilCleanup(t, worker);
  const closed = await queue.awaitClosed('acme', ticket.entryId, { timeoutMs: 30_000 });
  await worker.waitIdle();
  return { closed, handled, events };
}

it('a late answer, the entry taken and finished by another worker meanwhile: the handler never starts', async (t) => {
  const { closed, handled, events } = await lateAnswer(t, LEASE_MS + 1, true);
  assert.deepEqual(handled, [], 'the handler did not run a finished entry again');
  assert.equal(Buffer.from(closed!.result!).toString(), 'by the other');
  assert.ok(
    events.some((event) => event.type === 'lost'),
    'the run is reported lost',
  );
});

it('a late answer, its lease not yet run out: handed back, then run once', async (t) => {
  const { closed, handled } = await lateAnswer(t, LEASE_MS / 2, false);
  assert.deepEqual(handled, [2], 'run once, under the next take (its first attempt handed back)');
  assert.equal(closed!.outcome, 'succeeded');
  assert.equal(closed!.deferredAttempts, 1);
});

it('an answer in time runs at once', async (t) => {
  const { closed, handled } = await lateAnswer(t, LEASE_MS / 4 - 1, false);
  assert.deepEqual(handled, [1]);
  assert.equal(closed!.outcome, 'succeeded');
});
