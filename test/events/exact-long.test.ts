// Exact longs against an independent BigInt zigzag varint (test/events/avro-bytes.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { readExactLong, writeExactLong } from '../../src/events/exact-long.ts';
import { avroLong } from './avro-bytes.ts';
import { long } from './arbitraries.ts';

const EDGES = [
  0,
  1,
  -1,
  63,
  -64,
  64,
  -65,
  2 ** 31,
  -(2 ** 31),
  2 ** 52,
  -(2 ** 52),
  -(2 ** 52) - 1,
  Number.MAX_SAFE_INTEGER,
  Number.MIN_SAFE_INTEGER,
];

test('every safe integer writes and reads back exactly', () => {
  const check = (n: number): void => {
    assert.deepEqual([...writeExactLong(n)], avroLong(n), `write ${n}`);
    assert.equal(readExactLong(Uint8Array.from(avroLong(n))), n, `read ${n}`);
  };
  EDGES.forEach(check);
  fc.assert(
    fc.property(long, (n) => check(n)),
    { numRuns: 2000 },
  );
});

test('longs beyond Number.MAX_SAFE_INTEGER are refused on read', () => {
  for (const n of [2n ** 53n, -(2n ** 53n), 2n ** 63n - 1n, -(2n ** 63n)]) {
    assert.throws(() => readExactLong(Uint8Array.from(avroLong(n))), RangeError, String(n));
  }
  const overlong = Uint8Array.from([...Array(11).fill(0xff), 0x01]);
  assert.throws(() => readExactLong(overlong), RangeError);
});
