/**
 * What every reader of a whole snapshot must refuse, as Corrupt: shared by the tests of the
 * decode of its bytes whole (snapshot-codec.test.ts) and of the read where it lies
 * (snapshot-stream.test.ts), each registering these tests with its own reader.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { isRunlogError } from '../../src/errors.ts';
import { encodeSnapshot } from '../../src/events/snapshot-codec.ts';
import { GOLDEN_ENVELOPE, GOLDEN_STATE } from './golden-snapshots.ts';
import { ARRAYS, COUNT_LIES, withCountLie } from './snapshot-counts.ts';

/** Whether `read` throws Corrupt. */
export function refused(read: () => unknown): boolean {
  try {
    read();
    return false;
  } catch (error) {
    return isRunlogError(error, 'Corrupt');
  }
}

/**
 * Registers the refusal tests of `read` (a snapshot's bytes to its state): every truncation of
 * `snapshot`, any bit of it flipped (2,000 runs), and a checksummed state whose array count lies
 * (each array of the golden state, each lie of COUNT_LIES): refused as soon as the walk runs past
 * the state's bytes, never believed (avsc would build 2^30 items).
 */
export function refusalTests(snapshot: Uint8Array, read: (bytes: Uint8Array) => unknown): void {
  test('every truncation of a snapshot is refused as Corrupt', () => {
    for (let length = 0; length < snapshot.length; length++) {
      assert.ok(
        refused(() => read(snapshot.subarray(0, length))),
        `cut at ${length}`,
      );
    }
  });

  test('property: a snapshot with any bit flipped is refused as Corrupt', () => {
    fc.assert(
      fc.property(fc.nat(snapshot.length * 8 - 1), (bit) => {
        const damaged = snapshot.slice();
        damaged[bit >> 3]! ^= 1 << (bit & 7);
        return refused(() => read(damaged));
      }),
      { numRuns: 2_000 },
    );
  });

  test('a count that lies (the checksum made to match) is Corrupt, every array of the state, each lie', () => {
    for (const [lie, bytes] of COUNT_LIES) {
      for (const field of ARRAYS) {
        const lying = encodeSnapshot({ ...GOLDEN_ENVELOPE, state: withCountLie(GOLDEN_STATE, field, bytes) });
        assert.ok(
          refused(() => read(lying)),
          `${field}: ${lie}`,
        );
      }
    }
  });
}
