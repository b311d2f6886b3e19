import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { openFileLog } from '../../src/log/file/file-log.ts';
import { openRunQueueOnLog } from '../../src/queue/open-run-queue.ts';
import { FakeClock, submitOf } from '../contract/fixtures.ts';
import { runQueueContract } from '../contract/run-queue.contract.ts';
import { onCleanup, scratchDir } from '../support/cleanup.ts';

async function openLog(partitions: number, t: TestContext) {
  const dir = await scratchDir(t, 'runlog-queue-');
  return openFileLog({ dir, partitions });
}

runQueueContract('the file log', openLog, { modelRuns: 60 });
// Every closed entry read back from the log by its records' offsets (no cache): the same answers.
runQueueContract('the file log without a closed-entry cache', openLog, { modelRuns: 30, closedCacheBytes: 0 });

test('the ticket key survives a restart and compaction: the owner id reads TicketExpired, a forged one TicketNotFound, ids are never reused', async (t) => {
  const dir = await scratchDir(t, 'runlog-queue-');
  const clock = new FakeClock();
  const open = async () => openRunQueueOnLog(await openFileLog({ dir, partitions: 1 }), { clock: clock.read });
  let queue = await open();
  const ticket = await queue.submit(submitOf('acme', 't1'));
  await queue.cancel('acme', ticket.entryId);
  assert.equal(await queue.prune(0, 10), 1);
  await queue.log.compact(0);
  await queue.stop();
  queue = await open();
  onCleanup(t, () => queue.stop());
  const forged = ticket.entryId.slice(0, -2) + (ticket.entryId.at(-2) === 'x' ? 'y' : 'x') + ticket.entryId.at(-1);
  await assert.rejects(queue.entry('acme', ticket.entryId), { code: 'TicketExpired' });
  await assert.rejects(queue.entry('globex', ticket.entryId), { code: 'TicketExpired' });
  await assert.rejects(queue.entry('acme', forged), { code: 'TicketNotFound' });
  const fresh = await queue.submit(submitOf('acme', 't1'));
  assert.notEqual(fresh.entryId, ticket.entryId);
  assert.equal(queue.views()[0]!.issuedThrough, 2);
});
