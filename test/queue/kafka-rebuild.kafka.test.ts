/**
 * A failed command poisons nothing on Kafka either: one commit of the real producer fails
 * (wrapped, as in kafka-writer-faults), the command in it fails, and the next command on the
 * partition waits while the partition is rebuilt (claimed again: the writer proves it still
 * owns the partition, fencing nobody; then replayed) and is served.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isRunlogError } from '../../src/errors.ts';
import { TransactionalProducer } from '../../src/log/kafka/transactional-producer.ts';
import { openRunQueueOnLog } from '../../src/queue/open-run-queue.ts';
import { assertReplayEqualsLive, FakeClock, submitOf } from '../contract/fixtures.ts';
import { openTestKafkaLog } from '../log/kafka-test-support.ts';

/** Makes the next commit fail (before it is sent: the transaction stays open, and the writer's fresh InitProducerId aborts it). */
function failNextCommit(): { restore: () => void } {
  const commit = TransactionalProducer.prototype.commit;
  let failed = false;
  TransactionalProducer.prototype.commit = async function (this: TransactionalProducer): Promise<void> {
    if (failed) return commit.call(this);
    failed = true;
    throw new Error('injected EndTxn failure');
  };
  return { restore: () => void (TransactionalProducer.prototype.commit = commit) };
}

describe('Kafka: a failed command poisons nothing after it', () => {
  it('the next command on the partition waits for the rebuild and is served', async (t) => {
    const log = await openTestKafkaLog(t, 1);
    const queue = await openRunQueueOnLog(log, { clock: new FakeClock().read });
    t.after(() => queue.stop());
    const kept = await queue.submit(submitOf('acme', 't1'));
    const injected = failNextCommit();
    t.after(() => injected.restore());
    await assert.rejects(
      queue.submit(submitOf('acme', 't2')),
      (error: unknown) => isRunlogError(error, 'LogUnavailable') && /injected EndTxn failure/.test(error.message),
    );
    const next = await queue.submit(submitOf('acme', 't3'));
    assert.equal((await queue.entry('acme', next.entryId)).status, 'open');
    assert.equal((await queue.entry('acme', kept.entryId)).status, 'open');
    assert.equal((await queue.openEntries('acme', 't2')).length, 0, 'the failed submission is not in the log');
    await assertReplayEqualsLive(queue);
  });
});
