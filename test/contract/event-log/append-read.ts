/** EventLog contract, append and read: offsets, bytes, atomic batches, read ranges, partitions. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isRunlogError } from '../../../src/errors.ts';
import type { AppendRecord } from '../../../src/log/event-log.ts';
import { assertIncreasing, collect, rec, text } from '../log-records.ts';
import type { LogUnderTest } from './log-under-test.ts';

const isInvalid = (error: unknown): boolean => isRunlogError(error, 'InvalidArgument');

export function appendAndRead({ fresh }: LogUnderTest): void {
  describe('append and read', () => {
    it('reads back appended records in order with the offsets append returned', async (t) => {
      const log = await fresh(t);
      const start = await log.endOffset(0);
      const first = await log.append(0, [rec('a', '1'), rec('b', '2')]);
      const second = await log.append(0, [rec('c', '3')]);
      const offsets = [...first, ...second];
      assert.equal(offsets.length, 3);
      assert.ok(offsets[0]! >= start);
      assertIncreasing(offsets);
      const records = await collect(log.read(0, start));
      assert.deepEqual(
        records.map((r) => r.offset),
        offsets,
      );
      assert.deepEqual(
        records.map((r) => [r.key, text(r)]),
        [
          ['a', '1'],
          ['b', '2'],
          ['c', '3'],
        ],
      );
      assert.ok(records.every((r) => r.value instanceof Uint8Array));
    });

    it('keeps binary values byte for byte, including empty ones', async (t) => {
      const log = await fresh(t);
      const bytes = Uint8Array.from({ length: 300 }, (_, i) => i % 256);
      const [a, b] = await log.append(0, [
        { key: 'bin', value: bytes },
        { key: 'empty', value: new Uint8Array(0) },
      ]);
      const records = await collect(log.read(0, a!));
      assert.deepEqual([...records[0]!.value!], [...bytes]);
      assert.equal(records[1]!.offset, b);
      assert.equal(records[1]!.value!.length, 0);
    });

    it('an empty batch is a no-op that resolves to no offsets', async (t) => {
      const log = await fresh(t);
      const before = await log.endOffset(0);
      assert.deepEqual(await log.append(0, []), []);
      assert.equal(await log.endOffset(0), before);
      assert.deepEqual(await collect(log.read(0, 0n)), []);
    });

    it('a batch is atomic: one bad record and nothing of it is written', async (t) => {
      const log = await fresh(t);
      const before = await log.endOffset(0);
      const bad = { key: 'b', value: 'not bytes' } as unknown as AppendRecord;
      await assert.rejects(log.append(0, [rec('a', '1'), bad, rec('c', '3')]), isInvalid);
      assert.equal(await log.endOffset(0), before);
      assert.deepEqual(await collect(log.read(0, 0n)), []);
    });

    it('reads from the middle, and from past the end', async (t) => {
      const log = await fresh(t);
      const offsets = await log.append(
        0,
        Array.from({ length: 10 }, (_, i) => rec(`k${i}`, `v${i}`)),
      );
      const middle = await collect(log.read(0, offsets[4]!));
      assert.deepEqual(
        middle.map((r) => r.key),
        ['k4', 'k5', 'k6', 'k7', 'k8', 'k9'],
      );
      assert.deepEqual(await collect(log.read(0, (await log.endOffset(0)) + 5n)), []);
    });

    it('read stops after maxRecords', async (t) => {
      const log = await fresh(t);
      const offsets = await log.append(
        0,
        Array.from({ length: 10 }, (_, i) => rec(`k${i}`, `v${i}`)),
      );
      const some = await collect(log.read(0, offsets[2]!, { maxRecords: 3 }));
      assert.deepEqual(
        some.map((r) => r.key),
        ['k2', 'k3', 'k4'],
      );
      assert.deepEqual(await collect(log.read(0, offsets[0]!, { maxRecords: 0 })), []);
    });

    it('read ends at the end offset of the time of the call', async (t) => {
      const log = await fresh(t);
      await log.append(0, [rec('a', '1'), rec('b', '2')]);
      const seen: string[] = [];
      for await (const record of log.read(0, 0n)) {
        seen.push(record.key);
        if (seen.length === 1) await log.append(0, [rec('late', 'x')]);
      }
      assert.deepEqual(seen, ['a', 'b']);
    });

    it('endOffset is past every appended record', async (t) => {
      const log = await fresh(t);
      const empty = await log.endOffset(0);
      const offsets = await log.append(0, [rec('a', '1'), rec('b', '2')]);
      const end = await log.endOffset(0);
      assert.ok(end > offsets[1]!);
      assert.ok(offsets[0]! >= empty);
      const [next] = await log.append(0, [rec('c', '3')]);
      assert.ok(next! >= end);
    });

    it('reads tombstones back as null values', async (t) => {
      const log = await fresh(t);
      await log.append(0, [rec('a', '1'), rec('a', null)]);
      const records = await collect(log.read(0, 0n));
      assert.deepEqual(
        records.map((r) => [r.key, r.value]),
        [
          ['a', records[0]!.value],
          ['a', null],
        ],
      );
      assert.equal(text(records[0]!), '1');
    });

    it('keeps partitions apart', async (t) => {
      const log = await fresh(t, 3);
      await log.append(0, [rec('p0', 'a')]);
      await log.append(2, [rec('p2', 'b'), rec('p2', 'c')]);
      assert.deepEqual((await collect(log.read(0, 0n))).map(text), ['a']);
      assert.deepEqual(await collect(log.read(1, 0n)), []);
      assert.deepEqual((await collect(log.read(2, 0n))).map(text), ['b', 'c']);
      await log.compact(2);
      assert.deepEqual((await collect(log.read(0, 0n))).map(text), ['a']);
    });
  });
}
