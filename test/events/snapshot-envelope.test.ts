/**
 * A snapshot's envelope written around its encoded state, in place (snapshot-codec.ts
 * encodeSnapshot), is byte for byte the envelope encoded whole around a copy of the state:
 * random log ids (short, non-ASCII, longer than the room left before the state), partitions,
 * offsets past 2^31 and times; each decodes back to what was written. An envelope written a
 * second time around the same state (its room taken) is copied, and equal too.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { decodeSnapshot, decodeSnapshotState, encodeSnapshot, encodeSnapshotState } from '../../src/events/snapshot-codec.ts';
import { GOLDEN_STATE } from './golden-snapshots.ts';

const logId = fc.oneof(
  fc.string({ maxLength: 60 }),
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  fc.string({ minLength: 300, maxLength: 2_000 }),
);

test('an envelope written around its state in place is the envelope encoded whole', () => {
  fc.assert(
    fc.property(
      logId,
      fc.nat(1_000),
      fc.bigInt({ min: 0n, max: 2n ** 53n - 1n }),
      fc.integer({ min: 0, max: 2 ** 50 }),
      fc.nat(5),
      (id, partition, nextOffset, takenAt, issued) => {
        const state = encodeSnapshotState({ ...GOLDEN_STATE, issuedThrough: GOLDEN_STATE.issuedThrough + issued });
        const copy = Uint8Array.from(state);
        const fields = { logId: id, partition, nextOffset, takenAt };
        const placed = encodeSnapshot({ ...fields, state });
        // In place unless the log id does not fit the room before the state (1 KiB, less the other fields).
        assert.equal(placed.buffer === state.buffer, Buffer.byteLength(id) < 900, `${Buffer.byteLength(id)} bytes of log id`);
        const inPlace = Buffer.from(placed);
        const whole = Buffer.from(encodeSnapshot({ ...fields, state: copy }));
        assert.deepEqual(inPlace, whole);
        assert.deepEqual(Buffer.from(encodeSnapshot({ ...fields, state })), whole, 'written again around the same state: copied');
        const decoded = decodeSnapshot(inPlace);
        assert.deepEqual({ ...decoded, state: null, checksum: null }, { format: 1, ...fields, state: null, checksum: null });
        assert.deepEqual(decodeSnapshotState(decoded.state).issuedThrough, GOLDEN_STATE.issuedThrough + issued);
      },
    ),
    { numRuns: 200 },
  );
});
