import assert from 'node:assert/strict';
import { it } from 'node:test';
import fc from 'fast-check';
import type { AppendRecord, LogRecord } from '../../src/log/event-log.ts';
import { encodeAppend, groupFrame } from '../../src/log/file/append-frame.ts';
import { checkFrame, decodeFrame, encodeFrame, frameBytes, recordBytes } from '../../src/log/file/frame.ts';

const record = fc.record({
  key: fc.string({ unit: 'binary', maxLength: 40 }).filter((key) => (key as unknown as { isWellFormed(): boolean }).isWellFormed()),
  value: fc.option(fc.uint8Array({ maxLength: 300 }), { nil: null }),
});
const appends = fc.array(fc.array(record, { minLength: 1, maxLength: 12 }), { minLength: 1, maxLength: 6 });
const base = fc.oneof(fc.constant(0n), fc.bigInt({ min: 0n, max: 2n ** 62n }));

/** The frame frame.ts's encodeFrame makes of the same records, offsets dense from `base`. */
function referenceFrame(groups: AppendRecord[][], first: bigint): Buffer {
  const records: LogRecord[] = groups.flat().map((r, i) => ({ offset: first + BigInt(i), key: r.key, value: r.value }));
  return encodeFrame(records, frameBytes(records.reduce((sum, r) => sum + recordBytes(r.key, r.value), 0)));
}

it('a group frame of encoded appends is byte for byte the frame encodeFrame makes of their records', () => {
  fc.assert(
    fc.property(appends, base, (groups, first) => {
      const frame = groupFrame(
        groups.map((records) => encodeAppend(records)),
        first,
      );
      assert.deepEqual(frame, referenceFrame(groups, first));
      const check = checkFrame(frame, 0, frame.length);
      assert.deepEqual(check, { kind: 'frame', end: frame.length, base: first, count: groups.flat().length });
    }),
    { numRuns: 300 },
  );
});

it('an encoded append is a copy: changing the caller’s value afterwards changes nothing written', () => {
  const value = Uint8Array.from([1, 2, 3]);
  const encoded = encodeAppend([{ key: 'k', value }]);
  value.fill(9);
  const seen: LogRecord[] = [];
  const frame = groupFrame([encoded], 7n);
  assert.ok(decodeFrame(frame, 0, frame.length, 0n, (r) => seen.push(r)));
  assert.deepEqual(
    seen.map((r) => [r.offset, r.key, [...r.value!]]),
    [[7n, 'k', [1, 2, 3]]],
  );
});
