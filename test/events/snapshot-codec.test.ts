/**
 * The snapshot codec refuses, as Corrupt, whatever is not a whole snapshot of this format:
 * every truncation, a flipped bit anywhere (the checksum covers the envelope's fields and
 * the state), another record's bytes, a snapshot of an unknown format.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { isRunlogError } from '../../src/errors.ts';
import { encodeEvent } from '../../src/events/codec.ts';
import { decodeSnapshot, decodeSnapshotState, encodeSnapshot, encodeSnapshotState } from '../../src/events/snapshot-codec.ts';
import { GOLDEN_ENVELOPE, GOLDEN_STATE } from './golden-snapshots.ts';

const state = encodeSnapshotState(GOLDEN_STATE);
const snapshot = encodeSnapshot({ ...GOLDEN_ENVELOPE, state });

function refused(decode: () => unknown): boolean {
  try {
    decode();
    return false;
  } catch (error) {
    return isRunlogError(error, 'Corrupt');
  }
}

test('every truncation of a snapshot is refused as Corrupt', () => {
  for (let length = 0; length < snapshot.length; length++) {
    assert.ok(
      refused(() => decodeSnapshot(snapshot.subarray(0, length))),
      `cut at ${length}`,
    );
  }
});

test('property: a snapshot with any bit flipped is refused as Corrupt', () => {
  fc.assert(
    fc.property(fc.nat(snapshot.length * 8 - 1), (bit) => {
      const damaged = snapshot.slice();
      damaged[bit >> 3]! ^= 1 << (bit & 7);
      return refused(() => decodeSnapshot(damaged));
    }),
    { numRuns: 2_000 },
  );
});

test('an event, a state without its envelope, trailing bytes and another format are refused as Corrupt', () => {
  const event = encodeEvent({ type: 'ThreadDeleted', tenant: 'a', thread: 't', entryId: '0-1', at: 1, deferredAttempts: 0 });
  assert.ok(refused(() => decodeSnapshot(event)));
  assert.ok(refused(() => decodeSnapshot(state)));
  assert.ok(refused(() => decodeSnapshotState(snapshot)));
  assert.ok(refused(() => decodeSnapshot(Buffer.concat([snapshot, Buffer.from([0])]))));
  assert.ok(refused(() => decodeSnapshotState(Buffer.concat([state, Buffer.from([0])]))));
  const { format, ...rest } = decodeSnapshot(snapshot);
  assert.equal(format, 1);
  assert.deepEqual(decodeSnapshot(encodeSnapshot(rest)).nextOffset, GOLDEN_ENVELOPE.nextOffset);
});

test("decoding copies no column: the envelope's state and the state's columns are views of the bytes read, equal to what was encoded", () => {
  const envelope = decodeSnapshot(snapshot);
  assert.equal(envelope.state.buffer, snapshot.buffer, 'the state is a view of the snapshot');
  const decoded = decodeSnapshotState(envelope.state);
  assert.ok(decoded.closedIndex.length > 0);
  for (const [i, column] of decoded.closedIndex.entries()) {
    assert.equal(column.bytes.buffer, snapshot.buffer, `column ${column.name} is a view of the snapshot`);
    assert.deepEqual(new Uint8Array(column.bytes), new Uint8Array(GOLDEN_STATE.closedIndex[i]!.bytes));
  }
});
