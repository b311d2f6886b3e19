/**
 * The Kafka writer when a commit fails, by wrapping the real producer: one EndTxn, after a
 * pause (so the next batch is produced on the other lane meanwhile), fails. Every append
 * called before that failure was reported must fail too and none of those behind the failed
 * batch may become visible (the failed batch's own outcome is unknown, as after a real
 * EndTxn failure); the writer must serve again afterwards; every answered append is visible.
 * The second test pins the interleaving the first one meets only now and then: the batch
 * behind the failed one is still being produced when the failure is found and its
 * transaction aborted.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { AppendRecord, EventLog, LogRecord } from '../../src/log/event-log.ts';
import { TransactionalProducer, type ProducedMessage } from '../../src/log/kafka/transactional-producer.ts';
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

/**
 * Makes the next commit fail while the batch behind it is being produced: that commit waits
 * until a produce is called (the next batch's, on the other lane), then fails; the produce
 * is sent only once the failed transaction's abort (the writer's, on finding the failure)
 * has been answered.
 */
function failCommitWhileNextIsProduced(): { commitCalled: Promise<void>; restore: () => void } {
  const prototype = TransactionalProducer.prototype;
  const { commit, produce, abort } = prototype;
  let failing: TransactionalProducer | null = null;
  let held = false;
  let commitCalled!: () => void;
  let produceCalled!: () => void;
  let abortAnswered!: () => void;
  const called = new Promise<void>((resolve) => (commitCalled = resolve));
  const producing = new Promise<void>((resolve) => (produceCalled = resolve));
  const aborted = new Promise<void>((resolve) => (abortAnswered = resolve));
  prototype.commit = async function (this: TransactionalProducer): Promise<void> {
    if (failing !== null) return commit.call(this);
    failing = this;
    commitCalled();
    await producing;
    throw new Error('injected EndTxn failure');
  };
  prototype.produce = async function (this: TransactionalProducer, messages: readonly ProducedMessage[]): Promise<bigint> {
    if (failing !== null && !held) {
      held = true;
      produceCalled();
      await aborted;
      await new Promise(setImmediate); // everything the abort's answer set off has run
    }
    return produce.call(this, messages);
  };
  prototype.abort = async function (this: TransactionalProducer): Promise<void> {
    try {
      return await abort.call(this);
    } finally {
      if (this === failing) abortAnswered();
    }
  };
  return { commitCalled: called, restore: () => void Object.assign(prototype, { commit, produce, abort }) };
}

describe('Kafka log: a failed commit under pipelined appends', () => {
  it('fails the append behind a failed one even if it was still being produced when the failure was found', async (t) => {
    const log = await openTestKafkaLog(t, 1);
    await log.append(0, [rec('warm-up')]);
    const injected = failCommitWhileNextIsProduced();
    t.after(() => injected.restore());

    const first = log.append(0, [rec('a')]);
    first.catch(() => undefined); // asserted below
    await injected.commitCalled; // a's batch is produced and commits: the next append is a batch of its own
    const second = log.append(0, [rec('b')]);
    second.catch(() => undefined);
    await assert.rejects(first, /injected EndTxn failure/);
    await assert.rejects(second, 'b, made behind the failed a before its failure was reported, must fail');
    await log.append(0, [rec('c')]);
    assert.deepEqual(await keys(log, 0), ['warm-up', 'c'], 'nothing of the failed batch or behind it is visible; the writer serves again');
  });

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
      for (let j = i + 1; j < reportedAt[i]!; j++)
        assert.equal(outcomes[j], 'failed', `append ${j}, made behind failed append ${i} before its failure was reported, must fail`);
    }
    assert.ok(outcomes.slice(afterFailure).includes('ok'), 'the writer serves again after the failure');
    // A failed commit's own outcome is unknown (transaction-pipeline.ts): its batch, the first
    // failed appends, may be visible. Nothing made behind it may be, and every answered
    // append is, in call order.
    const visible = await keys(log, 0);
    const firstFailed = failed[0]!;
    const firstInvisible = failed.find((i) => !visible.includes(`a${i}`)) ?? Number.POSITIVE_INFINITY;
    const mayShow = (i: number): boolean => outcomes[i] === 'ok' || (i >= firstFailed && i < firstInvisible);
    const expected = outcomes.flatMap((_, i) => (mayShow(i) ? [`a${i}`] : []));
    assert.deepEqual(
      visible,
      ['warm-up', ...expected],
      'readers see the answered appends in call order, and of the failed ones at most the failed batch',
    );
    assert.ok(
      failed.slice(failed.indexOf(firstInvisible)).every((i) => !visible.includes(`a${i}`)),
      'no failed append behind an invisible one is visible',
    );
  });
});
