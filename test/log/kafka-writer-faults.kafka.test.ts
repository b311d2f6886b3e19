/**
 * The Kafka writer when a commit fails, by wrapping the real producer: one EndTxn, after a
 * pause (so the next batch is produced on the other lane meanwhile), fails. Every append
 * called before that failure was reported must fail too and none of those behind the failed
 * batch may become visible (the failed batch's own outcome is unknown, as after a real
 * EndTxn failure); the writer must serve again afterwards; every answered append is visible.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { AppendRecord, EventLog, LogRecord } from '../../src/log/event-log.ts';
import { TransactionalProducer } from '../../src/log/kafka/transactional-producer.ts';
import { openTestKafkaLog } from './kafka-test-support.ts';

const rec = (key: string): AppendRecord => ({ key, value: new TextEncoder().encode(key) });
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

async function keys(log: EventLog, partition: number): Promise<string[]> {
  const out: LogRecord[] = [];
  for await (const r of log.read(partition, 0n)) out.push(r);
  return out.map((r) => r.key);
}

/** Makes the `nth` commit from now pause, then fail; the others run as they are. */
function failNthCommit(nth: number, pauseMs: number): { restore: () => void } {
  const commit = TransactionalProducer.prototype.commit;
  let calls = 0;
  TransactionalProducer.prototype.commit = async function (this: TransactionalProducer): Promise<void> {
    if (++calls !== nth) return commit.call(this);
    await sleep(pauseMs);
    throw new Error('injected EndTxn failure');
  };
  return { restore: () => void (TransactionalProducer.prototype.commit = commit) };
}

describe('Kafka log: a failed commit under pipelined appends', () => {
  it('fails every append made behind it, then serves again; readers see exactly the answered appends', async (t) => {
    const log = await openTestKafkaLog(t, 1);
    await log.append(0, [rec('warm-up')]);
    const injected = failNthCommit(5, 30);
    t.after(() => injected.restore());

    // Append i is called when `called` is i; `reportedAt[i]` is how many had been called when its outcome arrived.
    const outcomes: Array<'ok' | 'failed'> = [];
    const reportedAt: number[] = [];
    const appends: Promise<void>[] = [];
    let called = 0;
    const appendNext = async (): Promise<void> => {
      const i = called++;
      appends.push(
        log.append(0, [rec(`a${i}`)]).then(
          () => void ((outcomes[i] = 'ok'), (reportedAt[i] = called)),
          () => void ((outcomes[i] = 'failed'), (reportedAt[i] = called)),
        ),
      );
      await sleep(1);
    };
    for (let round = 0; round < 1000 && !outcomes.includes('failed'); round++) await appendNext();
    const afterFailure = called;
    for (let round = 0; round < 100; round++) await appendNext();
    await Promise.all(appends);

    const failed = outcomes.flatMap((o, i) => (o === 'failed' ? [i] : []));
    assert.ok(failed.length > 0, 'the injected failure failed some appends');
    for (const i of failed) {
      for (let j = i + 1; j < reportedAt[i]!; j++) assert.equal(outcomes[j], 'failed', `append ${j}, made behind failed append ${i} before its failure was reported, must fail`);
    }
    assert.ok(outcomes.slice(afterFailure).includes('ok'), 'the writer serves again after the failure');
    // A failed commit's own outcome is unknown (partition-writer.ts): its batch, the first
    // failed appends, may be visible. Nothing made behind it may be, and every answered
    // append is, in call order.
    const visible = await keys(log, 0);
    const firstFailed = failed[0]!;
    const firstInvisible = failed.find((i) => !visible.includes(`a${i}`)) ?? Number.POSITIVE_INFINITY;
    const mayShow = (i: number): boolean => outcomes[i] === 'ok' || (i >= firstFailed && i < firstInvisible);
    const expected = outcomes.flatMap((_, i) => (mayShow(i) ? [`a${i}`] : []));
    assert.deepEqual(visible, ['warm-up', ...expected], 'readers see the answered appends in call order, and of the failed ones at most the failed batch');
    assert.ok(failed.slice(failed.indexOf(firstInvisible)).every((i) => !visible.includes(`a${i}`)), 'no failed append behind an invisible one is visible');
  });
});
