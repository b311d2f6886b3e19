/**
 * Single writer per partition on Kafka: a second writer claiming a partition fences the
 * first; the first's appends then fail with Fenced, and read_committed readers never see
 * anything it wrote after the fencing.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isRunlogError } from '../../src/errors.ts';
import type { AppendRecord, EventLog, LogRecord } from '../../src/log/event-log.ts';
import kafkajs from 'kafkajs';
import { openKafkaLog } from '../../src/log/kafka/kafka-log.ts';
import { TransactionalProducer } from '../../src/log/kafka/transactional-producer.ts';
import { isFencingError } from '../../src/log/kafka/errors.ts';
import { kafkaBrokers, openTestKafkaLog } from './kafka-test-support.ts';

const rec = (key: string): AppendRecord => ({ key, value: new TextEncoder().encode(key) });
const isFenced = (e: unknown): boolean => isRunlogError(e, 'Fenced') && !e.retriable;

async function keys(log: EventLog, partition: number): Promise<string[]> {
  const out: LogRecord[] = [];
  for await (const r of log.read(partition, 0n)) out.push(r);
  return out.map((r) => r.key);
}

describe('Kafka log: fencing', () => {
  it("a second writer fences the first; the first's next append is Fenced and never visible", async (t) => {
    const first = await openTestKafkaLog(t, 2);
    await first.append(0, [rec('first-before')]);
    await first.append(1, [rec('first-other-partition')]);

    const second = await openKafkaLog({ brokers: kafkaBrokers(), topic: first.topic, partitions: 2 });
    t.after(() => second.close());
    await second.claim(0);

    await assert.rejects(first.append(0, [rec('first-after-1'), rec('first-after-2')]), isFenced);
    await assert.rejects(first.append(0, [rec('first-after-3')]), isFenced, 'a fenced writer stays fenced');
    await first.append(1, [rec('first-still-owns-1')]);
    await second.append(0, [rec('second')]);

    assert.deepEqual(await keys(second, 0), ['first-before', 'second']);
    assert.deepEqual(await keys(first, 0), ['first-before', 'second'], 'a fenced log can still read');
    assert.deepEqual(await keys(second, 1), ['first-other-partition', 'first-still-owns-1']);
  });

  it('under concurrent appends, exactly the answered appends of the fenced writer are visible', async (t) => {
    const first = await openTestKafkaLog(t, 1);
    const answered = new Set<string>();
    const refused: unknown[] = [];
    let stop = false;
    const writers = Array.from({ length: 16 }, async (_, w) => {
      for (let i = 0; !stop; i++) {
        const key = `w${w}-${i}`;
        try {
          await first.append(0, [rec(key)]);
          answered.add(key);
        } catch (error) {
          refused.push(error);
          return;
        }
      }
    });
    while (answered.size < 50) await new Promise((resolve) => setTimeout(resolve, 5));

    const second = await openKafkaLog({ brokers: kafkaBrokers(), topic: first.topic, partitions: 1 });
    t.after(() => second.close());
    await second.claim(0);
    stop = true;
    await Promise.all(writers);
    await second.append(0, [rec('second')]);

    assert.ok(refused.length > 0, 'some appends were refused');
    assert.ok(refused.every(isFenced), `every refusal is Fenced: ${refused.map(String).join('; ')}`);
    const visible = await keys(second, 0);
    assert.equal(visible.at(-1), 'second');
    assert.deepEqual(new Set(visible.slice(0, -1)), answered);
  });

  it('pipelined appends: what stays visible is a prefix of them in call order, and none succeeds after one failed', async (t) => {
    const first = await openTestKafkaLog(t, 1);
    const keysInCallOrder: string[] = [];
    const outcomes: Array<'ok' | 'fenced' | 'other'> = [];
    const appends: Promise<void>[] = [];
    const appendNext = (): void => {
      const i = keysInCallOrder.length;
      keysInCallOrder.push(`p${i}`);
      appends.push(
        first.append(0, [rec(`p${i}`)]).then(
          () => void (outcomes[i] = 'ok'),
          (error: unknown) => void (outcomes[i] = isFenced(error) ? 'fenced' : 'other'),
        ),
      );
    };
    // Appends keep coming, without waiting for each other, until well after the new writer's claim.
    let claimed = false;
    const appending = (async () => {
      for (let after = 0; !claimed || after < 50; after += claimed ? 1 : 0) {
        appendNext();
        await new Promise((resolve) => setTimeout(resolve, 0));
      }
    })();
    while (outcomes.filter((o) => o === 'ok').length < 5) await new Promise((resolve) => setTimeout(resolve, 1));
    const second = await openKafkaLog({ brokers: kafkaBrokers(), topic: first.topic, partitions: 1 });
    t.after(() => second.close());
    await second.claim(0);
    claimed = true;
    await appending;
    await Promise.all(appends);

    const firstFailure = outcomes.findIndex((o) => o !== 'ok');
    assert.ok(firstFailure > 0, `some appends succeeded and some failed: ${outcomes.join(',')}`);
    assert.ok(
      outcomes.slice(firstFailure).every((o) => o === 'fenced'),
      `after the first failure every append is Fenced: ${outcomes.join(',')}`,
    );
    assert.deepEqual(await keys(second, 0), keysInCallOrder.slice(0, firstFailure), 'exactly the answered appends, in call order');
  });

  it("a loser's late claim of the second lane does not unseat the owner: it proves lane 0 its own, claims lane 1 back, and the loser's lane is fenced", async (t) => {
    const owner = await openTestKafkaLog(t, 1);
    await owner.claim(0);
    // A racing opener that lost lane 0 to the owner but initialised lane 1 after it did.
    const kafka = new kafkajs.Kafka({ clientId: 'runlog-test-loser', brokers: kafkaBrokers(), logLevel: kafkajs.logLevel.NOTHING });
    const loserLane1 = await TransactionalProducer.connect({
      kafka,
      transactionalId: `runlog:${owner.topic}:0:1`,
      transactionTimeoutMs: 60_000,
      topic: owner.topic,
      partition: 0,
    });
    t.after(() => loserLane1.disconnect());

    await owner.append(0, [rec('on-lane-0')]);
    await owner.append(0, [rec('on-lane-1')]); // lane 1 was fenced by the loser: claimed back, not given up
    await owner.append(0, [rec('on-lane-0-again')]);
    await assert.rejects(loserLane1.begin(), (error: unknown) => isFencingError(error), "the loser's lane 1 is fenced now");
    assert.deepEqual(await keys(owner, 0), ['on-lane-0', 'on-lane-1', 'on-lane-0-again']);
  });

  describe("lane 1 found fenced at commit (another writer's claim came between its produce and its commit)", () => {
    /** Runs `before` ahead of the `nth` commit from now, then the commit itself. */
    function beforeNthCommit(nth: number, before: () => Promise<void>): { restore: () => void } {
      const commit = TransactionalProducer.prototype.commit;
      let calls = 0;
      TransactionalProducer.prototype.commit = async function (this: TransactionalProducer): Promise<void> {
        if (++calls === nth) await before();
        return commit.call(this);
      };
      return { restore: () => void (TransactionalProducer.prototype.commit = commit) };
    }

    it('claimed by a new owner: the append is Fenced, like every later one, and is not visible', async (t) => {
      const first = await openTestKafkaLog(t, 1);
      await first.claim(0);
      const second = await openKafkaLog({ brokers: kafkaBrokers(), topic: first.topic, partitions: 1 });
      t.after(() => second.close());
      const injected = beforeNthCommit(2, () => second.claim(0));
      t.after(() => injected.restore());
      await first.append(0, [rec('lane-0')]);
      await assert.rejects(first.append(0, [rec('lane-1')]), isFenced, 'Fenced, not a retriable failure: the writer found lane 0 lost');
      await assert.rejects(first.append(0, [rec('later')]), isFenced);
      await second.append(0, [rec('second')]);
      assert.deepEqual(await keys(second, 0), ['lane-0', 'second']);
    });

    it("claimed by a loser: the append fails, retriable, and the owner serves on; the loser's lane is fenced", async (t) => {
      const owner = await openTestKafkaLog(t, 1);
      await owner.claim(0);
      const kafka = new kafkajs.Kafka({ clientId: 'runlog-test-loser', brokers: kafkaBrokers(), logLevel: kafkajs.logLevel.NOTHING });
      let loserLane1: TransactionalProducer | undefined;
      t.after(() => loserLane1?.disconnect());
      const injected = beforeNthCommit(2, async () => {
        loserLane1 = await TransactionalProducer.connect({
          kafka,
          transactionalId: `runlog:${owner.topic}:0:1`,
          transactionTimeoutMs: 60_000,
          topic: owner.topic,
          partition: 0,
        });
      });
      t.after(() => injected.restore());
      await owner.append(0, [rec('lane-0')]);
      await assert.rejects(owner.append(0, [rec('lane-1')]), (error: unknown) => isRunlogError(error, 'LogUnavailable') && error.retriable);
      await owner.append(0, [rec('after')]);
      await owner.append(0, [rec('after-2')]);
      await assert.rejects(loserLane1!.begin(), (error: unknown) => isFencingError(error));
      assert.deepEqual(await keys(owner, 0), ['lane-0', 'after', 'after-2']);
    });
  });

  it('appends on a closed log are Stopped', async (t) => {
    const log = await openTestKafkaLog(t, 1);
    await log.close();
    await assert.rejects(log.append(0, [rec('late')]), (e: unknown) => isRunlogError(e, 'Stopped'));
  });
});
