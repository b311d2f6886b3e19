/**
 * Where the console's history endpoint starts reading (src/server/entry-starts.ts), on a real
 * file log: for every entry the start is at or before its Submitted record, and within two
 * sample spans of it while the store clock goes forward; after the clock steps back (a
 * restart on another machine) the start is still at or before it; records appended after the
 * first question are read on the next one; a time before every record starts at zero.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { encodeEvent } from '../../src/events/codec.ts';
import { openFileLog } from '../../src/log/file/file-log.ts';
import { EntryStarts } from '../../src/server/entry-starts.ts';
import { scratchDir } from '../support/cleanup.ts';
import { submittedEvent } from '../../bench/submitted-event.ts';

const EVERY = 16;

it("starts at or before each entry's submission, and close to it; a clock stepping back keeps it before", async (t) => {
  const dir = await scratchDir(t, 'runlog-entry-starts-');
  const log = await openFileLog({ dir, partitions: 2, fsync: false });
  t.after(() => log.close());
  const submitted: { at: number; offset: bigint }[] = [];
  let seq = 0;
  const append = async (times: number[]): Promise<void> => {
    for (const at of times) {
      const entryId = `1-e${++seq}`;
      const value = encodeEvent(submittedEvent({ tenant: 'acme', thread: 't', entryId, seq, at }));
      const [offset] = await log.append(1, [{ key: `e/${entryId}/s`, value }]);
      submitted.push({ at, offset: offset! });
    }
  };
  // 200 records a millisecond apart, several to a millisecond at times.
  await append(Array.from({ length: 200 }, (_, i) => 1_000 + Math.floor(i / 3)));
  const starts = new EntryStarts(log, EVERY);
  for (const { at, offset } of submitted) {
    const start = await starts.startOf(1, at);
    assert.ok(start <= offset, `the start ${start} is at or before the submission at ${offset}`);
    assert.ok(offset - start < BigInt(2 * EVERY + 3), `the start ${start} is close to ${offset}`);
  }
  assert.equal(await starts.startOf(1, 999), 0n, 'before every record: from zero');
  assert.equal(await starts.startOf(0, 5_000), 0n, 'an empty partition: from zero');

  // The clock steps back by a second, then goes on: read by the next question.
  await append(Array.from({ length: 100 }, (_, i) => 100 + i));
  for (const { at, offset } of submitted) assert.ok((await starts.startOf(1, at)) <= offset, `at ${at}: not after ${offset}`);
  const late = submitted.at(-1)!;
  assert.ok((await starts.startOf(1, late.at)) <= late.offset);
});
