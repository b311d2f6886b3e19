/**
 * Array counts that lie in a snapshot's state: where an array's count lies in a state's bytes
 * and how to make it lie. Shared by the readers' unit tests (snapshot-refusals.ts) and the
 * restart and verify tests of test/queue/ (snapshot-damage.ts).
 */
import assert from 'node:assert/strict';
import { encodeSnapshotState } from '../../src/events/snapshot-codec.ts';
import type { PartitionState } from '../../src/events/snapshot-types.ts';
import { GOLDEN_STATE } from './golden-snapshots.ts';

/** The state's arrays, in the schema's order. */
export const ARRAYS = ['threads', 'closedEntries', 'closedIndex', 'submissionKeys', 'answers'] as const;
export type StateArray = (typeof ARRAYS)[number];

/** Avro's encoding of the long `value` (zigzag varint). */
export function avroLong(value: bigint): number[] {
  let n = value >= 0n ? value * 2n : -value * 2n - 1n;
  const out: number[] = [];
  while (n >= 0x80n) {
    out.push(Number((n & 0x7fn) | 0x80n));
    n >>= 7n;
  }
  return [...out, Number(n)];
}

/**
 * Counts that lie, as bytes in an empty array's place: 2^30 items; and one block of -2^30 items
 * said to be 0 bytes long, then the array's end (a negative count gives the block's byte size
 * next: a reader that skips a block by its size never sees the count a decoder believes).
 */
export const COUNT_LIES: readonly (readonly [string, readonly number[]])[] = [
  ['2^30 items', avroLong(2n ** 30n)],
  ['-2^30 items in a block of 0 bytes', [...avroLong(-(2n ** 30n)), 0, 0]], // the count, the block's size, the array's end
];

/**
 * Where `field`'s count lies in the encoding of `state` (encodeSnapshotState): the first byte
 * that differs between the state with that array empty and with one item. The fields before
 * it are the same in both, so it is also where the count lies in `state`'s own encoding.
 */
export function countOffset(state: PartitionState, field: StateArray): number {
  const empty = Buffer.from(encodeSnapshotState({ ...state, [field]: [] }));
  const one = Buffer.from(encodeSnapshotState({ ...state, [field]: GOLDEN_STATE[field].slice(0, 1) }));
  let at = 0;
  while (empty[at] === one[at]) at++;
  assert.equal(empty[at], 0, `${field}'s count found at byte ${at}`);
  return at;
}

/** `state` with `field` empty, its count (a single 0 byte) then replaced by `lie`. */
export function withCountLie(state: PartitionState, field: StateArray, lie: readonly number[]): Uint8Array {
  const empty = Buffer.from(encodeSnapshotState({ ...state, [field]: [] }));
  const at = countOffset(state, field);
  return Buffer.concat([empty.subarray(0, at), Buffer.from(lie), empty.subarray(at + 1)]);
}
