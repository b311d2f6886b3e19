/** The EventLog contract against a real Kafka broker, plus what only Kafka has: topic checks. */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { isRunlogError } from '../../src/errors.ts';
import { DEFAULT_KAFKA_PARTITIONS, openKafkaLog, type KafkaLogOptions } from '../../src/log/kafka/kafka-log.ts';
import { eventLogContract } from '../contract/event-log.contract.ts';
import type { LogRecord } from '../../src/log/event-log.ts';
import kafkajs from 'kafkajs';
import { runChildUntilExit } from '../support/child-exit.ts';
import { deleteTopic, kafkaBrokers, openTestKafkaLog, uniqueTopic } from './kafka-test-support.ts';

eventLogContract('kafka', (partitions, t) => openTestKafkaLog(t, partitions), { compactionIsSynchronous: false });

describe('Kafka log: stats', () => {
  it('counts the transactions committed and the appends and records in them, over every partition', async (t) => {
    const log = await openTestKafkaLog(t, 2);
    const value = new Uint8Array([1]);
    assert.deepEqual(log.stats(), { transactions: 0, appends: 0, records: 0 });
    await log.append(
      0,
      [0, 1, 2].map((i) => ({ key: `k${i}`, value })),
    );
    assert.deepEqual(log.stats(), { transactions: 1, appends: 1, records: 3 });
    await Promise.all([
      log.append(1, [{ key: 'a', value }]),
      log.append(1, [
        { key: 'b', value },
        { key: 'c', value: null },
      ]),
    ]);
    const { transactions, ...rest } = log.stats();
    assert.deepEqual(rest, { appends: 3, records: 6 });
    assert.ok(
      transactions === 2 || transactions === 3,
      `two appends to one partition make one transaction or two, got ${transactions - 1}`,
    );
    await assert.rejects(log.append(2, [{ key: 'x', value }]), (e: unknown) => isRunlogError(e, 'InvalidArgument'));
    assert.deepEqual(log.stats(), { transactions, ...rest }, 'a refused append counts nothing');
  });
});

describe('Kafka log: readAt, one record by offset', () => {
  it('answers the record read() finds at each offset, tombstones too; null past the end; refused after close', async (t) => {
    const log = await openTestKafkaLog(t, 2);
    const records = Array.from({ length: 12 }, (_, i) => ({ key: `k${i}`, value: i % 5 === 4 ? null : Buffer.from(`value ${i}`) }));
    await log.append(1, records.slice(0, 5));
    await log.append(1, records.slice(5, 6));
    await log.append(1, records.slice(6));
    const all: LogRecord[] = [];
    for await (const record of log.read(1, 0n)) all.push(record);
    assert.equal(all.length, 12);
    for (const expected of all) {
      const found = await log.readAt!(1, expected.offset);
      assert.deepEqual(found === null ? null : { ...found, value: found.value === null ? null : Buffer.from(found.value) }, {
        ...expected,
        value: expected.value === null ? null : Buffer.from(expected.value),
      });
    }
    const end = await log.endOffset(1);
    assert.equal(await log.readAt!(1, end), null, 'past the end: nothing');
    assert.equal(await log.readAt!(0, 0n), null, 'an empty partition: nothing');
    await assert.rejects(log.readAt!(2, 0n), (e: unknown) => isRunlogError(e, 'InvalidArgument'));
    await log.close();
    await assert.rejects(log.readAt!(1, 0n), (e: unknown) => isRunlogError(e, 'Stopped'));
  });

  it('reads at once, and reads in flight as it closes, leave no connection open: the process exits', async (t) => {
    const topic = uniqueTopic();
    t.after(() => deleteTopic(topic));
    // A hang is the failure (kafkajs left a socket per concurrent first fetch, and connected again for a fetch sent after the close: point-reader.ts #inLane).
    const limitMs = 60_000;
    const { code, signal, output } = await runChildUntilExit(join(import.meta.dirname, 'read-at-exit-child.ts'), [topic], limitMs);
    assert.equal(output.trim(), 'read abc abc; late reads answered or Stopped');
    assert.equal(signal, null, `the child did not exit within ${limitMs / 1000} s of closing its log: a Kafka connection was left open`);
    assert.equal(code, 0);
  });
});

describe('Kafka log: the topic', () => {
  it('reopens an existing topic with the same partition count and sees its records', async (t) => {
    const topic = uniqueTopic();
    const first = await openTestKafkaLog(t, 3, { topic });
    const [offset] = await first.append(1, [{ key: 'k', value: new Uint8Array([1]) }]);
    const second = await openKafkaLog({ brokers: kafkaBrokers(), topic, partitions: 3 });
    t.after(() => second.close());
    const records = [];
    for await (const r of second.read(1, 0n)) records.push(r);
    assert.deepEqual(
      records.map((r) => [r.offset, r.key]),
      [[offset, 'k']],
    );
  });

  it('without a partition count: an existing topic keeps its count, a new one gets the default', async (t) => {
    const topic = uniqueTopic();
    await openTestKafkaLog(t, 3, { topic });
    const reopened = await openKafkaLog({ brokers: kafkaBrokers(), topic });
    t.after(() => reopened.close());
    assert.equal(reopened.partitions, 3);
    const fresh = uniqueTopic();
    const created = await openKafkaLog({ brokers: kafkaBrokers(), topic: fresh });
    t.after(async () => {
      await created.close();
      await deleteTopic(fresh);
    });
    assert.equal(created.partitions, DEFAULT_KAFKA_PARTITIONS);
  });

  it('refuses an existing topic with another partition count, naming both', async (t) => {
    const topic = uniqueTopic();
    await openTestKafkaLog(t, 2, { topic });
    await assert.rejects(
      openKafkaLog({ brokers: kafkaBrokers(), topic, partitions: 4 }),
      (e: unknown) => isRunlogError(e, 'InvalidArgument') && e.message.includes(topic) && /2/.test(e.message) && /4/.test(e.message),
    );
  });

  it('refuses an existing topic that is not compacted, naming the policy', async (t) => {
    const topic = uniqueTopic();
    const admin = new kafkajs.Kafka({ brokers: kafkaBrokers(), logLevel: kafkajs.logLevel.NOTHING }).admin();
    await admin.connect();
    t.after(async () => {
      await admin.disconnect();
      await deleteTopic(topic);
    });
    await admin.createTopics({
      waitForLeaders: true,
      topics: [{ topic, numPartitions: 1, configEntries: [{ name: 'cleanup.policy', value: 'delete' }] }],
    });
    await assert.rejects(
      openKafkaLog({ brokers: kafkaBrokers(), topic, partitions: 1 }),
      (e: unknown) =>
        isRunlogError(e, 'InvalidArgument') && e.message.includes(topic) && /delete/.test(e.message) && /compact/.test(e.message),
    );
  });

  it('refuses a bad topic name and an empty broker list', async () => {
    await assert.rejects(openKafkaLog({ brokers: kafkaBrokers(), topic: 'no spaces', partitions: 1 }), (e: unknown) =>
      isRunlogError(e, 'InvalidArgument'),
    );
    await assert.rejects(openKafkaLog({ brokers: [], topic: 'x', partitions: 1 }), (e: unknown) => isRunlogError(e, 'InvalidArgument'));
  });

  it('refuses bad writer and reader options, naming the value, before touching the broker', async () => {
    const topic = uniqueTopic();
    const bad: Array<[Partial<KafkaLogOptions>, RegExp]> = [
      [{ transactionTimeoutMs: -5 }, /transactionTimeoutMs.*-5/],
      [{ transactionTimeoutMs: 1.5e6 }, /transactionTimeoutMs.*1500000/],
      [{ tailWaitMs: 0 }, /tailWaitMs.*0/],
      [{ topicConfig: { 'segment.ms': 100 } as unknown as Record<string, string> }, /topicConfig.*segment\.ms/],
    ];
    for (const [options, names] of bad) {
      await assert.rejects(
        openKafkaLog({ brokers: kafkaBrokers(), topic, partitions: 1, ...options }),
        (e: unknown) => isRunlogError(e, 'InvalidArgument') && names.test(e.message),
      );
    }
    const admin = new kafkajs.Kafka({ brokers: kafkaBrokers(), logLevel: kafkajs.logLevel.NOTHING }).admin();
    await admin.connect();
    const topics = await admin.listTopics();
    await admin.disconnect();
    assert.ok(!topics.includes(topic), 'nothing was created');
  });
});
