/**
 * A batch whose records do not fit one append goes in several (Partition.#append), each
 * command's records kept in one: on a real file log that says its appends hold at most 4 KiB
 * (a wrapper passing everything else on), 200 submissions of 100-byte inputs take several
 * appends, every item is answered with its own ticket, the records lie dense and in item order,
 * and a queue reopened on the log holds every entry.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { decodeEvent } from '../../src/events/codec.ts';
import { APPEND_BUILT, type AppendRecord } from '../../src/log/event-log.ts';
import { openFileLog } from '../../src/log/file/file-log.ts';
import { openRunQueueOnLog } from '../../src/queue/open-run-queue.ts';
import { collect } from '../contract/log-records.ts';
import { onCleanup, scratchDir } from '../support/cleanup.ts';
import { wrapLog } from '../support/wrap-log.ts';

const ITEMS = 200;
const MAX_APPEND_BYTES = 4096;

it('a batch larger than one append goes in several: every item answered, records dense and in order, all there after a reopen', async (t) => {
  const dir = await scratchDir(t, 'runlog-batch-appends-');
  const real = await openFileLog({ dir, partitions: 1 });
  const appends: number[] = [];
  const small = wrapLog(real, {
    maxAppendBytes: MAX_APPEND_BYTES,
    [APPEND_BUILT]: (partition: number, records: readonly AppendRecord[]) => {
      appends.push(records.length);
      return real[APPEND_BUILT]!(partition, records);
    },
  });
  const queue = await openRunQueueOnLog(small, { snapshots: false });
  const input = new Uint8Array(100).fill(7);
  const answers = await queue.submitBatch(
    Array.from({ length: ITEMS }, (_, i) => ({ tenant: 'acme', thread: `t${i % 8}`, agent: 'build', input, key: `k${i}` })),
  );
  assert.ok(appends.length > 1, `${appends.length} appends`);
  const tickets = answers.map((answer) => {
    assert.ok('ticket' in answer, JSON.stringify(answer));
    return answer.ticket.entryId;
  });
  assert.equal(new Set(tickets).size, ITEMS);

  const records = await collect(real.read(0, 0n));
  assert.deepEqual(
    records.map((record) => record.offset),
    records.map((_, i) => BigInt(i)),
  );
  const submitted = records.flatMap((record) => {
    const event = record.value === null ? null : decodeEvent(record.value);
    return event?.type === 'Submitted' ? [event.entryId] : [];
  });
  assert.deepEqual(submitted, tickets, 'the records lie in item order');
  await queue.stop(); // closes the log too

  const again = await openRunQueueOnLog(await openFileLog({ dir }), { snapshots: false });
  onCleanup(t, () => again.stop());
  for (const entryId of tickets) assert.equal((await again.entry('acme', entryId))?.entryId, entryId);
});
