// The codec's table of readers by fingerprint halves (src/events/fingerprint-table.ts): every
// fingerprint put in is found, on both halves, whatever slots they share; nothing else is.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FingerprintTable } from '../../src/events/fingerprint-table.ts';

test('every fingerprint is found by both halves, and only those put in', () => {
  const entries: [number, number, string][] = [];
  // Shared low halves (the codec's old Map kept a list for them), zero halves, the largest halves, and many in one table (it grows).
  for (let i = 0; i < 40; i++) entries.push([i % 5 === 0 ? 0x1234_5678 : (i * 0x9e37_79b9) >>> 0, i, `reader ${i}`]);
  entries.push([0, 0, 'zeros'], [0xffff_ffff, 0xffff_ffff, 'ones']);
  const table = new FingerprintTable(entries);
  for (const [low, high, value] of entries) assert.equal(table.get(low, high), value);
  assert.equal(table.get(0x1234_5678, 1), undefined);
  assert.equal(table.get(0, 1), undefined);
  assert.equal(table.get(0xffff_fffe, 0xffff_ffff), undefined);
  assert.equal(new FingerprintTable<string>([]).get(0, 0), undefined);
});
