/**
 * A Kafka broker crash under a RunQueue: the broker process of its own (not the run's shared
 * one) is SIGKILLed while submissions are in flight, then started again on the same data.
 * While it is down, commands fail with a retriable LogUnavailable and never hang; once it is
 * back, the same RunQueue serves again without being reopened; and every acknowledged
 * submission is in the log: the live view equals a replay, also in a fresh RunQueue. A closed
 * entry read back before the crash (no cache: a Fetch on the log's kept connection,
 * point-reader.ts) reads back again once the broker is back, on a connection made anew.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isRunlogError } from '../../src/errors.ts';
import { openKafkaLog } from '../../src/log/kafka/kafka-log.ts';
import { type RunQueue } from '../../src/queue/run-queue.ts';
import { openRunQueueOnLog } from '../../src/queue/open-run-queue.ts';
import { snapshotView } from '../support/snapshot-view.ts';
// @ts-expect-error: plain ESM JavaScript without type declarations
import { startBroker } from '../broker/broker.mjs';
import { assertReplayEqualsLive, FakeClock, submitOf } from '../contract/fixtures.ts';
import { uniqueTopic } from '../log/kafka-test-support.ts';

interface Broker {
  brokers: string;
  stop(): Promise<void>;
  kill(): Promise<void>;
  restart(): Promise<void>;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

async function until(what: string, condition: () => boolean, withinMs: number): Promise<void> {
  const deadline = Date.now() + withinMs;
  while (!condition()) {
    if (Date.now() > deadline) assert.fail(`${what}: not within ${withinMs} ms`);
    await sleep(20);
  }
}

async function queueOn(broker: Broker, topic: string, clock: FakeClock): Promise<RunQueue> {
  const log = await openKafkaLog({ brokers: [broker.brokers], topic, partitions: 1 });
  return openRunQueueOnLog(log, { clock: clock.read, closedCacheBytes: 0 });
}

/** Submits, takes and closes an entry for agent `closer`: its entry id. */
async function closeOne(queue: RunQueue): Promise<string> {
  const { entryId } = await queue.submit(submitOf('acme', 'closed', { agent: 'closer' }));
  const [started] = await queue.takeStarted({ agents: ['closer'], holder: 'closer-1', ttlMs: 60_000 });
  assert.equal(started?.entry.entryId, entryId);
  await queue.close(started!.lease, { status: 'succeeded', result: `result of ${entryId}` });
  return entryId;
}

/** The closed entry `entryId` read back (no cache) answers its result. */
async function assertReadBack(queue: RunQueue, entryId: string): Promise<void> {
  const entry = await queue.entry('acme', entryId);
  assert.equal(entry.status, 'closed');
  assert.equal(Buffer.from(entry.result!).toString(), `result of ${entryId}`);
}

describe('RunQueue on Kafka: the broker crashes and comes back', () => {
  it(
    'commands fail while it is down, the queue serves again once it is back, and nothing acknowledged is lost',
    { timeout: 240_000 },
    async (t) => {
      const broker: Broker = await startBroker({ port: 0 });
      t.after(() => broker.stop());
      const topic = uniqueTopic('runlog-crash');
      const clock = new FakeClock();
      const queue = await queueOn(broker, topic, clock);
      t.after(() => queue.stop());

      const acknowledged = new Set<string>();
      const refusals: unknown[] = [];
      let submitting = true;
      const submitters = Array.from({ length: 8 }, async (_, s) => {
        while (submitting) {
          try {
            acknowledged.add((await queue.submit(submitOf('acme', `thread-${s}`))).entryId);
          } catch (error) {
            refusals.push(error);
            await sleep(50);
          }
        }
      });

      const closedBefore = await closeOne(queue);
      await assertReadBack(queue, closedBefore);
      await until('submissions acknowledged before the crash', () => acknowledged.size >= 200, 60_000);
      await broker.kill();
      await until('a submission refused while the broker is down', () => refusals.length > 0, 60_000);
      const acknowledgedWhileDown = acknowledged.size;
      await sleep(500);
      await broker.restart();
      await until('the same queue serving again', () => acknowledged.size >= acknowledgedWhileDown + 200, 120_000);
      submitting = false;
      await Promise.all(submitters);
      await assertReadBack(queue, closedBefore);
      await assertReadBack(queue, await closeOne(queue));

      for (const refusal of refusals) {
        assert.ok(
          isRunlogError(refusal, 'LogUnavailable') && refusal.retriable,
          `refused with a retriable LogUnavailable, not ${String(refusal)}`,
        );
      }
      await assertReplayEqualsLive(queue);
      const live = queue.views().map(snapshotView);
      const open = new Set(
        (await Promise.all(Array.from({ length: 8 }, (_, s) => queue.openEntries('acme', `thread-${s}`)))).flat().map((e) => e.entryId),
      );
      for (const entryId of acknowledged) assert.ok(open.has(entryId), `acknowledged ${entryId} is in the view`);
      await queue.stop();

      const fresh = await queueOn(broker, topic, clock);
      t.after(() => fresh.stop());
      assert.deepEqual(fresh.views().map(snapshotView), live, 'a fresh RunQueue replays the same view');
      await fresh.stop(); // before the broker stops (t.after would run them in registration order)
    },
  );
});
