/**
 * A keyed submit whose key names an entry still in flight (submitted in the same tick, its
 * append not yet durable) is answered only once that entry is durable: if the append fails,
 * the ticket it would have answered names nothing. It is decided again on the rebuilt view
 * instead (creating the entry). A real file log on real files, its append failed by wrapping.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isRunlogError } from '../../src/errors.ts';
import { openFileLog } from '../../src/log/file/file-log.ts';
import { openRunQueueOnLog } from '../../src/queue/open-run-queue.ts';
import { FakeClock, submitOf } from '../contract/fixtures.ts';
import { onCleanup, scratchDir } from '../support/cleanup.ts';
import { FaultyLog } from './faulty-log.ts';

describe('a keyed submit naming an entry in flight', () => {
  it('is not acknowledged when the append holding that entry fails', async (t) => {
    const log = await openFileLog({ dir: await scratchDir(t, 'runlog-keyed-in-flight'), partitions: 2 });
    const faulty = new FaultyLog(log);
    const queue = await openRunQueueOnLog(faulty.wrap(), { clock: new FakeClock().read, onWarning: () => {} });
    onCleanup(t, () => queue.stop());
    const request = { ...submitOf('acme', 'build-1'), key: 'order-17' };

    faulty.failNextAppend = true;
    const [first, again] = await Promise.allSettled([queue.submit(request), queue.submit(request)]);
    assert.equal(first.status, 'rejected');
    assert.ok(isRunlogError(first.reason, 'LogUnavailable') && first.reason.retriable, `the failed append: ${String(first.reason)}`);
    assert.equal(again.status, 'fulfilled', 'the second submit is decided again once the partition serves');
    const ticket = again.value;
    const entry = await queue.entry('acme', ticket.entryId); // TicketNotFound if the ticket named the lost entry
    assert.equal(entry.status, 'open');
    assert.equal(ticket.created, true, 'the lost entry was never created: the second submit creates it');
    assert.deepEqual(
      (await queue.openEntries('acme', 'build-1')).map((e) => e.entryId),
      [ticket.entryId],
    );
    const repeated = await queue.submit(request);
    assert.deepEqual(repeated, { ...ticket, created: false });
  });
});
