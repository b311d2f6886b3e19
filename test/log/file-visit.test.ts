/**
 * The file log's `visit` (BatchedRecords.visit): records handed over where they lie in the read
 * buffers, which the replay (src/projector/replay.ts catchUp) folds from. It must see exactly
 * what `read` returns (offsets, keys, values, tombstones; any start, record limit and end; sealed
 * segments opened unread; compaction's gaps), refuse damage as `read` does, and a replay through
 * it must equal a replay through the batches. decodeEventAt must equal decodeEvent.
 */
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { it } from 'node:test';
import fc from 'fast-check';
import { isRunlogError } from '../../src/errors.ts';
import { decodeEvent, decodeEventAt, encodeEvent } from '../../src/events/codec.ts';
import type { BatchedRecords, EventLog, LogRecord } from '../../src/log/event-log.ts';
import { openFileLog } from '../../src/log/file/file-log.ts';
import { SEGMENT_HEADER_BYTES } from '../../src/log/file/segment-header.ts';
import { catchUp } from '../../src/projector/replay.ts';
import { PartitionView } from '../../projections/partition-view.ts';
import { collect, rec } from '../contract/log-records.ts';
import { GOLDEN_EVENTS } from '../events/golden-events.ts';
import { lifecycleEvents, recordsOf, benchEntryId } from '../../bench/throughput.ts';
import { snapshotView } from '../support/snapshot-view.ts';
import { onCleanup, scratchDir } from '../support/cleanup.ts';
import { segmentPaths } from './file-damage.ts';

type Seen = [bigint, string, string | null];

/** What `visit` hands over, made into plain values during each call (the buffer is reused after it). */
async function visited(records: AsyncIterable<LogRecord>): Promise<{ seen: Seen[]; count: number }> {
  const visit = (records as BatchedRecords).visit;
  assert.equal(typeof visit, 'function', 'the file log offers visit');
  const seen: Seen[] = [];
  const count = await visit!.call(records, (offset, buf, keyStart, valueStart, valueEnd) => {
    seen.push([
      BigInt(offset),
      buf.toString('utf8', keyStart, valueStart),
      valueEnd < 0 ? null : buf.toString('utf8', valueStart, valueEnd),
    ]);
  });
  return { seen, count };
}

function asSeen(records: readonly LogRecord[]): Seen[] {
  return records.map((r) => [r.offset, r.key, r.value === null ? null : Buffer.from(r.value).toString('utf8')]);
}

it('visit sees what read returns: any start and record limit, tombstones, sealed segments opened unread, compaction gaps', async (t) => {
  const dir = await scratchDir(t, 'runlog-file-visit-');
  const options = { dir, partitions: 1, segmentBytes: 2048, fsync: false } as const;
  let log = await openFileLog(options);
  for (let frame = 0; frame < 60; frame++) {
    const records = Array.from({ length: 1 + (frame % 6) }, (_, i) =>
      rec(`k${(frame * 7 + i) % 23}`, i === 2 ? null : `v${frame}-${i}-${'x'.repeat((frame * 11) % 90)}`),
    );
    await log.append(0, records);
  }
  const check = async (): Promise<void> => {
    const all = await collect(log.read(0, 0n));
    const last = all[all.length - 1]!.offset;
    await fc.assert(
      fc.asyncProperty(fc.bigInt({ min: 0n, max: last + 3n }), fc.option(fc.integer({ min: 0, max: 400 })), async (from, maxRecords) => {
        const options = maxRecords === null ? undefined : { maxRecords };
        const expected = asSeen(await collect(log.read(0, from, options)));
        const { seen, count } = await visited(log.read(0, from, options));
        assert.deepEqual(seen, expected);
        assert.equal(count, expected.length);
      }),
      { numRuns: 60 },
    );
  };
  await check();
  await log.close();
  log = await openFileLog(options); // sealed segments opened unread: visit CRC-checks them as read does
  onCleanup(t, () => log.close());
  await check();
  // The active segment's frames were checked at open (not CRC-checked again when read); the frames appended since are.
  for (let frame = 0; frame < 8; frame++) await log.append(0, [rec(`k${frame}`, `after open ${frame}`), rec('k', null)]);
  await check();
  await log.compact(0); // gaps between offsets, tombstones dropped
  await check();
});

it('visit refuses a damaged frame of a sealed segment as read does, naming the file', async (t) => {
  const dir = await scratchDir(t, 'runlog-file-visit-damage-');
  const options = { dir, partitions: 1, segmentBytes: 300, fsync: false, onWarning: () => {} } as const;
  const writing = await openFileLog(options);
  for (let i = 0; i < 24; i++) await writing.append(0, [rec(`k${i}`, `value ${i}`)]);
  await writing.close();
  const [first] = await segmentPaths(join(dir, 'partition-0'));
  const bytes = await readFile(first!);
  bytes[SEGMENT_HEADER_BYTES + 30] = bytes[SEGMENT_HEADER_BYTES + 30]! ^ 0xff;
  await writeFile(first!, bytes);
  const log = await openFileLog(options);
  onCleanup(t, () => log.close());
  const refusal = (error: unknown): boolean => isRunlogError(error) && error.code === 'Corrupt' && error.message.includes(first!);
  await assert.rejects(collect(log.read(0, 0n)), refusal);
  await assert.rejects(visited(log.read(0, 0n)), refusal);
});

it('a frame appended after the open and damaged on disk is refused by read and visit: only what the open checked is not checked again', async (t) => {
  const dir = await scratchDir(t, 'runlog-file-visit-checked-');
  const options = { dir, partitions: 1, fsync: false, onWarning: () => {} } as const;
  const writing = await openFileLog(options);
  for (let i = 0; i < 5; i++) await writing.append(0, [rec(`k${i}`, `before open ${i}`)]);
  await writing.close();
  const log = await openFileLog(options); // the active segment's 5 frames are checked here
  onCleanup(t, () => log.close());
  for (let i = 0; i < 3; i++) await log.append(0, [rec(`k${i}`, `after open ${i}`)]);
  const [path] = await segmentPaths(join(dir, 'partition-0'));
  const bytes = await readFile(path!);
  const at = bytes.indexOf('after open 1');
  bytes[at] = bytes[at]! ^ 0xff;
  await writeFile(path!, bytes);
  const refusal = (error: unknown): boolean => isRunlogError(error) && error.code === 'Corrupt' && error.message.includes(path!);
  await assert.rejects(collect(log.read(0, 0n)), refusal);
  await assert.rejects(visited(log.read(0, 0n)), refusal);
  assert.deepEqual(
    (await visited(log.read(0, 0n, { maxRecords: 6 }))).seen.map(([, , value]) => value),
    [...Array.from({ length: 5 }, (_, i) => `before open ${i}`), 'after open 0'],
  );
});

it('decodeEventAt decodes a record where it lies as decodeEvent decodes it, and refuses a cut record alike', () => {
  for (const [name, event] of Object.entries(GOLDEN_EVENTS)) {
    const bytes = encodeEvent(event);
    const buf = Buffer.concat([Buffer.from('before'), bytes, Buffer.from('after')]);
    assert.deepEqual(decodeEventAt(buf, 6, 6 + bytes.length), decodeEvent(bytes), name);
    for (const cut of [1, 9, bytes.length - 1]) {
      const whole = (() => {
        try {
          return decodeEvent(bytes.subarray(0, cut));
        } catch (error) {
          return error;
        }
      })();
      assert.throws(
        () => decodeEventAt(buf, 6, 6 + cut),
        (error) => isRunlogError(error) && error.code === 'Corrupt' && error.message === (whole as Error).message,
        `${name} cut at ${cut}`,
      );
    }
  }
});

/** The log without `visit`: its read answers the batches only, as a log that offers no visit. */
function withoutVisit(log: EventLog): EventLog {
  return new Proxy(log, {
    get(target, name, receiver) {
      if (name !== 'read') return Reflect.get(target, name, receiver);
      return (partition: number, from: bigint) => {
        const records = target.read(partition, from) as BatchedRecords;
        return { [Symbol.asyncIterator]: () => records[Symbol.asyncIterator](), batches: () => records.batches() };
      };
    },
  });
}

it('a replay through visit equals a replay through the batches, also caught up in steps', async (t) => {
  const dir = await scratchDir(t, 'runlog-file-visit-replay-');
  const log = await openFileLog({ dir, partitions: 1, segmentBytes: 4096, fsync: false });
  onCleanup(t, () => log.close());
  const views = [new PartitionView(0), new PartitionView(0)];
  const logs = [log, withoutVisit(log)];
  for (let round = 0; round < 4; round++) {
    for (let i = round * 50; i < (round + 1) * 50; i++) {
      const seq = i + 1;
      const events = lifecycleEvents('acme', `t${i % 7}`, benchEntryId(0, seq), seq, 1_700_000_000_000 + i, `run-${i}`);
      await log.append(0, recordsOf(i % 3 === 0 ? events.slice(0, 2 + (i % 2)) : events)); // some stay open
    }
    await log.append(0, [{ key: `e/${benchEntryId(0, round * 50 + 2)}/s`, value: null }]); // a tombstone of a closed entry
    const counts = await Promise.all(views.map((view, n) => catchUp(logs[n]!, 0, view)));
    assert.equal(counts[0], counts[1]);
    assert.deepEqual(snapshotView(views[0]!), snapshotView(views[1]!));
    assert.equal(views[0]!.nextOffset, views[1]!.nextOffset);
    // A catch-up indexes heads once at its end (deferHeads): takes answer as after folding record by record.
    const folded = new PartitionView(0);
    for (const record of await collect(log.read(0, 0n))) folded.apply(record.offset, record.key, record.value && decodeEvent(record.value));
    for (const at of [0, 1_700_000_000_000, 1_700_000_000_000 + 60_010, 1_700_000_000_000 + 120_000]) {
      for (const tenants of [null, ['acme'], ['other']]) {
        const answer = (view: PartitionView): unknown => [view.bestHead(['work'], at, tenants)?.entryId, view.nextDueAt(['work'], tenants)];
        assert.deepEqual(answer(views[0]!), answer(folded), `at ${at}, tenants ${tenants}`);
        assert.deepEqual(answer(views[1]!), answer(folded));
      }
    }
    assert.ok(folded.bestHead(['work'], 1_700_000_000_000 + 120_000) !== undefined, 'some open head is takeable');
  }
  assert.ok(views[0]!.closed.size > 0 && views[0]!.entries.size > 0);
});
