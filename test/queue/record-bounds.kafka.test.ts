/**
 * Record bounds on Kafka, against the real broker: the log's record limit comes from the
 * topic's max.message.bytes, the queue's default maxInputBytes is derived to fit it, and a
 * group commit whose records together outgrow one record batch is split, not refused.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { EventLog, LogRecord } from '../../src/log/event-log.ts';
import { openRunQueue, openRunQueueOnLog } from '../../src/queue/open-run-queue.ts';
import { RECORD_HEADROOM_BYTES } from '../../src/queue/queue-options.ts';
import { recordBoundsSemantics, says } from '../contract/record-bounds.contract.ts';
import { assertReplayEqualsLive, FakeClock, logSize, submitOf } from '../contract/fixtures.ts';
import { deleteTopic, kafkaBrokers, openTestKafkaLog, uniqueTopic } from '../log/kafka-test-support.ts';

const SMALL = 64 * 1024; // max.message.bytes of the topics below

async function records(log: EventLog, partition: number): Promise<LogRecord[]> {
  const out: LogRecord[] = [];
  for await (const record of log.read(partition, 0n)) out.push(record);
  return out;
}

recordBoundsSemantics('the Kafka log', (partitions, t) => openTestKafkaLog(t, partitions));

describe('record bounds on Kafka', () => {
  it("the log's record limit comes from the topic's max.message.bytes: the largest record is accepted and reads back, one byte more is refused unsent", async (t) => {
    const log = await openTestKafkaLog(t, 1, { topicConfig: { 'max.message.bytes': String(SMALL) } });
    assert.ok(
      log.maxRecordBytes < SMALL && log.maxRecordBytes > SMALL - 200,
      `maxRecordBytes ${log.maxRecordBytes} is max.message.bytes less a batch's overhead`,
    );
    const key = 'e/0-1/s';
    const value = new Uint8Array(log.maxRecordBytes - key.length).fill(1);
    await log.append(0, [{ key, value }]);
    await assert.rejects(
      log.append(0, [{ key, value: new Uint8Array(value.length + 1) }]),
      says('records[0]', String(log.maxRecordBytes), 'max.message.bytes'),
    );
    const read = await records(log, 0);
    assert.equal(read.length, 1);
    assert.deepEqual(read[0]!.value, value);
  });

  it('an append of many records that together outgrow one record batch is split, atomically, and every record reads back in order', async (t) => {
    const log = await openTestKafkaLog(t, 1, { topicConfig: { 'max.message.bytes': String(SMALL) } });
    const batch = Array.from({ length: 10 }, (_, i) => ({ key: `k${i}`, value: new Uint8Array(log.maxRecordBytes - 10).fill(i) }));
    const offsets = await log.append(0, batch);
    assert.equal(offsets.length, 10);
    for (let i = 1; i < offsets.length; i++) assert.ok(offsets[i]! > offsets[i - 1]!);
    const read = await records(log, 0);
    assert.deepEqual(
      read.map((r) => r.key),
      batch.map((r) => r.key),
    );
    assert.deepEqual(
      read.map((r) => r.offset),
      offsets,
    );
  });

  it('on a small topic the default maxInputBytes fits: the largest input is acknowledged and reads back, one byte more is InvalidArgument, and the next submit is served', async (t) => {
    const log = await openTestKafkaLog(t, 2, { topicConfig: { 'max.message.bytes': String(SMALL) } });
    const queue = await openRunQueueOnLog(log, { clock: new FakeClock().read });
    t.after(() => queue.stop());
    assert.equal(queue.maxInputBytes, log.maxRecordBytes - RECORD_HEADROOM_BYTES);
    const largest = new Uint8Array(queue.maxInputBytes).fill(5);
    const ticket = await queue.submit(submitOf('acme', 't1', { input: largest }));
    const before = await logSize(log);
    await assert.rejects(
      queue.submit(submitOf('acme', 't1', { input: new Uint8Array(queue.maxInputBytes + 1) })),
      says('input', String(queue.maxInputBytes)),
    );
    assert.equal(await logSize(log), before, 'nothing was written');
    // The next command on the same partition is served at once (it used to fail with the refused one's error).
    const next = await queue.submit(submitOf('acme', 't1', { input: 'x' }));
    assert.deepEqual((await queue.entry('acme', ticket.entryId)).input, largest);
    assert.equal((await queue.entry('acme', next.entryId)).status, 'open');
    // Many large submits in one tick: one group commit, split into record batches that fit.
    const many = await Promise.all(Array.from({ length: 8 }, (_, i) => queue.submit(submitOf('acme', `many-${i}`, { input: largest }))));
    assert.equal(many.length, 8);
    await assertReplayEqualsLive(queue);
  });

  it('a maxInputBytes that does not fit the topic is refused at open, naming it and the most that fits', async (t) => {
    const topic = uniqueTopic();
    t.after(() => deleteTopic(topic));
    const log = { kind: 'kafka' as const, brokers: kafkaBrokers(), topic, topicConfig: { 'max.message.bytes': String(SMALL) } };
    await assert.rejects(openRunQueue({ log, partitions: 1, maxInputBytes: SMALL }), says('maxInputBytes', 'at most'));
    const queue = await openRunQueue({ log, partitions: 1 });
    t.after(() => queue.stop());
    assert.ok(queue.maxInputBytes < SMALL - RECORD_HEADROOM_BYTES + 1);
  });
});
