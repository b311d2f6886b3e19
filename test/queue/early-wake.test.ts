/**
 * onWork wakes its listeners once a command that may have made work takeable is decided, not
 * once it is durable (partition.ts #wakeSoon): a take sent from the listener is decided
 * against the view holding the submission, and answers only once durable. A real file log
 * whose appends are held at a gate (wrapping it), so "not durable yet" is a fact, not a race.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import type { AppendRecord } from '../../src/log/event-log.ts';
import { openFileLog } from '../../src/log/file/file-log.ts';
import { openRunQueueOnLog } from '../../src/queue/open-run-queue.ts';
import type { Taken } from '../../src/queue/types.ts';
import { submitOf } from '../contract/fixtures.ts';
import { onCleanup, scratchDir } from '../support/cleanup.ts';
import { wrapLog } from '../support/wrap-log.ts';

it('onWork is called while the submission is not durable yet; a take it sends leases the entry and answers once durable', async (t) => {
  const dir = await scratchDir(t, 'runlog-early-wake-');
  const log = await openFileLog({ dir, partitions: 1 });
  let gated = false;
  let openGate!: () => void;
  const gate = new Promise<void>((resolve) => (openGate = resolve));
  let durableAppends = 0;
  const queue = await openRunQueueOnLog(
    wrapLog(log, {
      append: async (partition: number, records: readonly AppendRecord[]) => {
        if (gated) await gate;
        const offsets = await log.append(partition, records);
        durableAppends++;
        return offsets;
      },
    }),
  );
  onCleanup(t, async () => {
    openGate();
    await queue.stop();
  });
  gated = true;
  const appendsBefore = durableAppends;
  let woken = 0;
  let taking: Promise<Taken | null> | null = null;
  let durableAtWake = -1;
  queue.onWork(() => {
    woken++;
    durableAtWake = durableAppends;
    taking ??= queue.take({ agents: ['build'], holder: 'early', ttlMs: 60_000 });
  });
  let submitted = false;
  const submitting = queue.submit(submitOf('acme', 'thread-1')).then((ticket) => {
    submitted = true;
    return ticket;
  });
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(woken, 1, 'the listener was called once the submission was decided');
  assert.equal(durableAtWake, appendsBefore, 'no append had completed when it was called');
  assert.equal(submitted, false, 'the submission is not durable yet');
  let taken: Taken | null | undefined;
  void taking!.then((answer) => (taken = answer));
  await new Promise((resolve) => setTimeout(resolve, 50));
  assert.equal(taken, undefined, 'the take does not answer before its append is durable');
  openGate();
  const ticket = await submitting;
  const answer = await taking!;
  assert.equal(answer?.entry.entryId, ticket.entryId, 'the take sent from the listener leased the submitted entry');
  assert.equal(answer?.lease.holder, 'early');
  const [entry] = await queue.openEntries('acme', 'thread-1');
  assert.equal(entry?.lease?.holder, 'early', 'the lease is durable and current');
});
