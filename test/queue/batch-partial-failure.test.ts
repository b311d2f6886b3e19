/**
 * A batch spans partitions, one append each. When one partition's append fails and another's
 * is durable, the batch answers each item as it stands: the durable partition's items done,
 * the failed one's items its failure (LogUnavailable). Before, the call rejected whole: a
 * takeStarted's durable leases and attempts were answered to nobody and ran out, each attempt
 * spent (the Kafka tester, from the code); a submitBatch's durable entries were told not done
 * (submitted again by a caller that retries). When every partition fails the call rejects, as
 * one append's failure does. A real file log of two partitions, wrapped so that partition 1's
 * appends fail while `failing` is set.
 */
import assert from 'node:assert/strict';
import { describe, it, type TestContext } from 'node:test';
import { RunlogError, isRunlogError } from '../../src/errors.ts';
import type { AppendRecord } from '../../src/log/event-log.ts';
import { openFileLog } from '../../src/log/file/file-log.ts';
import { partitionOf } from '../../src/log/partitioner.ts';
import { openRunQueueOnLog } from '../../src/queue/open-run-queue.ts';
import type { SubmitRequest } from '../../src/queue/types.ts';
import { onCleanup, scratchDir } from '../support/cleanup.ts';
import { wrapLog } from '../support/wrap-log.ts';

const FAILING_PARTITION = 1;

async function twoPartitions(t: TestContext) {
  const dir = await scratchDir(t, 'runlog-batch-partial-');
  const real = await openFileLog({ dir, partitions: 2 });
  const fault = { failing: false };
  const append = (partition: number, records: readonly AppendRecord[]): Promise<bigint[]> =>
    fault.failing && partition === FAILING_PARTITION
      ? Promise.reject(new RunlogError('LogUnavailable', 'partition 1: injected append failure'))
      : real.append(partition, records);
  const queue = await openRunQueueOnLog(wrapLog(real, { append }), { snapshots: false, onWarning: () => {} });
  onCleanup(t, () => queue.stop());
  return { queue, fault };
}

/** A thread of acme on `partition` (of 2), the n-th found. */
function threadOn(partition: number, n = 0): string {
  for (let i = 0, found = 0; ; i++) if (partitionOf('acme', `t${i}`, 2) === partition && found++ === n) return `t${i}`;
}

const item = (thread: string, input = 'x'): SubmitRequest => ({ tenant: 'acme', thread, agent: 'build', input });
const ok = threadOn(1 - FAILING_PARTITION);
const failing = threadOn(FAILING_PARTITION);

describe('a batch whose append fails on one partition of two', () => {
  it('submitBatch: the durable partition answers its tickets, the failed one LogUnavailable', async (t) => {
    const { queue, fault } = await twoPartitions(t);
    fault.failing = true;
    const answers = await queue.submitBatch([item(ok, 'a'), item(failing, 'b'), item(ok, 'c')]);
    assert.deepEqual(
      answers.map((answer) => ('ticket' in answer ? 'ticket' : answer.error.code)),
      ['ticket', 'LogUnavailable', 'ticket'],
    );
    const written = await queue.openEntries('acme', ok);
    assert.deepEqual(
      written.map((entry) => Buffer.from(entry.input).toString()),
      ['a', 'c'],
    );
  });

  it('takeStarted: answers the leases and attempts that are durable, not the failed partition', async (t) => {
    const { queue, fault } = await twoPartitions(t);
    const onOk = await queue.submit(item(ok));
    await queue.submit(item(failing));
    fault.failing = true;
    const started = await queue.takeStarted({ agents: ['build'], holder: 'w', ttlMs: 60_000, max: 10 });
    assert.deepEqual(
      started.map(({ entry, attempt }) => [entry.entryId, attempt?.attempt]),
      [[onOk.entryId, 1]],
    );
    const entry = await queue.entry('acme', onOk.entryId);
    assert.deepEqual([entry.lease?.holder, entry.attempts.length], ['w', 1], 'what was answered is what is durable');
  });

  it('closeBatch: the durable partition answers its closed entries, the failed one LogUnavailable; all failing rejects', async (t) => {
    const { queue, fault } = await twoPartitions(t);
    await queue.submit(item(ok));
    await queue.submit(item(failing));
    const started = await queue.takeStarted({ agents: ['build'], holder: 'w', ttlMs: 60_000, max: 10 });
    assert.equal(started.length, 2);
    fault.failing = true;
    const closes = started.map(({ lease }) => ({ lease, request: { status: 'succeeded' as const } }));
    const answers = await queue.closeBatch(closes);
    const byThread = Object.fromEntries(
      started.map(({ entry }, i) => [entry.thread, 'entry' in answers[i]! ? 'closed' : answers[i]!.error.code]),
    );
    assert.deepEqual(byThread, { [ok]: 'closed', [failing]: 'LogUnavailable' });

    const again = await queue.submit(item(ok)).then(
      () => null,
      (e: unknown) => e,
    );
    assert.equal(again, null, 'the durable partition goes on');
    await assert.rejects(queue.submitBatch([item(failing)]), (e: unknown) => isRunlogError(e, 'LogUnavailable'));
  });
});
