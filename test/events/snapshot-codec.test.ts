/**
 * The snapshot codec refuses, as Corrupt, whatever is not a whole snapshot of this format:
 * every truncation, a flipped bit anywhere (the checksum covers the envelope's fields and
 * the state), an array count its bytes cannot hold (snapshot-refusals.ts, shared with the read
 * where it lies), another record's bytes, a snapshot of an unknown format.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { encodeEvent } from '../../src/events/codec.ts';
import { decodeSnapshot, decodeSnapshotState, encodeSnapshot, encodeSnapshotState } from '../../src/events/snapshot-codec.ts';
import { GOLDEN_ENVELOPE, GOLDEN_STATE } from './golden-snapshots.ts';
import { refusalTests, refused } from './snapshot-refusals.ts';

const state = encodeSnapshotState(GOLDEN_STATE);
const snapshot = encodeSnapshot({ ...GOLDEN_ENVELOPE, state });

refusalTests(snapshot, (bytes) => decodeSnapshotState(decodeSnapshot(bytes).state));

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
