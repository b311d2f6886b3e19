/**
 * EventLog contract, compaction. It may be asynchronous (Kafka's cleaner): then only what
 * holds both before and after compaction is asserted.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { LogRecord } from '../../../src/log/event-log.ts';
import { collect, rec, text } from '../log-records.ts';
import type { LogUnderTest } from './log-under-test.ts';

/** key -> latest value (tombstones remove the key): what compaction must never change. */
function fold(records: readonly LogRecord[]): Map<string, string> {
  const view = new Map<string, string>();
  for (const r of records) {
    const value = text(r);
    if (value === null) view.delete(r.key);
    else view.set(r.key, value);
  }
  return view;
}

export function compaction({ fresh, synchronousCompaction }: LogUnderTest): void {
  describe('compaction', () => {
    it('keeps the latest record per key at its offset and drops tombstones', async (t) => {
      const log = await fresh(t);
      const offsets = await log.append(0, [rec('a', 'a1'), rec('b', 'b1'), rec('a', 'a2'), rec('c', 'c1')]);
      const more = await log.append(0, [rec('b', null), rec('d', 'd1'), rec('c', 'c2')]);
      const before = await collect(log.read(0, 0n));
      const end = await log.endOffset(0);
      await log.compact(0);
      const after = await collect(log.read(0, 0n));
      assert.deepEqual(fold(after), fold(before));
      assert.equal(await log.endOffset(0), end);
      if (!synchronousCompaction) return;
      assert.deepEqual(
        after.map((r) => [r.offset, r.key, text(r)]),
        [
          [offsets[2], 'a', 'a2'],
          [more[1], 'd', 'd1'],
          [more[2], 'c', 'c2'],
        ],
      );
    });

    it('keeps the end offset when everything is compacted away; offsets are never reused', async (t) => {
      const log = await fresh(t);
      const offsets = await log.append(0, [rec('a', '1'), rec('b', '2'), rec('a', null), rec('b', null)]);
      const end = await log.endOffset(0);
      await log.compact(0);
      assert.equal(await log.endOffset(0), end);
      if (synchronousCompaction) assert.deepEqual(await collect(log.read(0, 0n)), []);
      const [next] = await log.append(0, [rec('c', '3')]);
      assert.ok(next! > offsets[3]!);
      const tailRead = await collect(log.read(0, next!));
      assert.deepEqual(
        tailRead.map((r) => [r.offset, r.key]),
        [[next, 'c']],
      );
    });

    it('reads from an offset compacted away start at the next kept record', async (t) => {
      const log = await fresh(t);
      const offsets = await log.append(0, [rec('a', '1'), rec('b', '2'), rec('a', '3'), rec('c', '4')]);
      await log.compact(0);
      const after = await collect(log.read(0, offsets[1]!));
      assert.deepEqual(fold(after).get('c'), '4');
      if (synchronousCompaction)
        assert.deepEqual(
          after.map((r) => r.key),
          ['b', 'a', 'c'],
        );
      const fromZero = await collect(log.read(0, offsets[0]!, { maxRecords: 1 }));
      if (synchronousCompaction) assert.equal(fromZero[0]!.offset, offsets[1]);
    });

    it('appends and reads keep working after compaction, repeatedly', async (t) => {
      const log = await fresh(t);
      for (let round = 0; round < 3; round++) {
        await log.append(0, [rec('x', `x${round}`), rec(`only${round}`, 'o')]);
        await log.compact(0);
      }
      const view = fold(await collect(log.read(0, 0n)));
      assert.deepEqual(Object.fromEntries(view), { x: 'x2', only0: 'o', only1: 'o', only2: 'o' });
    });
  });
}
