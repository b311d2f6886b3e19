/**
 * Reading a snapshot where it lies (src/events/snapshot-stream.ts) answers what decoding its
 * bytes whole answers (snapshot-codec.ts), and refuses, as Corrupt, whatever the whole decode
 * refuses: every truncation, a flipped bit anywhere, trailing bytes, another format. The
 * columns' bytes are not read, only found: read at the places it names, they are the columns.
 */
import assert from 'node:assert/strict';
import { readSync } from 'node:fs';
import { open, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { isRunlogError } from '../../src/errors.ts';
import { decodeSnapshot, decodeSnapshotState, encodeSnapshot, encodeSnapshotState } from '../../src/events/snapshot-codec.ts';
import {
  checksumAside,
  readSnapshotHead,
  readSnapshotState,
  verifySnapshotChecksum,
  type SnapshotSource,
} from '../../src/events/snapshot-stream.ts';
import type { PartitionState } from '../../src/events/snapshot-types.ts';
import { scratchDir } from '../support/cleanup.ts';
import { GOLDEN_ENVELOPE, GOLDEN_STATE } from './golden-snapshots.ts';
import { avroLong, countOffset } from './snapshot-counts.ts';
import { refusalTests, refused } from './snapshot-refusals.ts';

/** Bytes read by position, counting what is read. */
function sourceOf(bytes: Uint8Array): SnapshotSource & { readBytes: number } {
  return {
    size: bytes.length,
    readBytes: 0,
    read(into, position) {
      if (position + into.length > bytes.length) throw new Error(`read past the end: ${into.length} at ${position} of ${bytes.length}`);
      into.set(bytes.subarray(position, position + into.length));
      this.readBytes += into.length;
    },
  };
}

function readWhere(bytes: Uint8Array): ReturnType<typeof readSnapshotState> & { head: ReturnType<typeof readSnapshotHead> } {
  const source = sourceOf(bytes);
  const head = readSnapshotHead(source);
  verifySnapshotChecksum(source, head);
  return { head, ...readSnapshotState(source, head) };
}

/** A state with columns larger than the reader's windows (256 KiB, 4 MiB), between open and closed entries whole. */
function bigState(): PartitionState {
  const big = new Uint8Array(5 << 20).map((_, i) => (i * 7919) & 0xff);
  return {
    ...GOLDEN_STATE,
    closedIndex: [
      { name: 'version:number', bytes: new Uint8Array(0), strings: ['1'] },
      { name: 'seq:f64', bytes: big, strings: [] },
      { name: 'tenants:strings', bytes: new Uint8Array(0), strings: ['acme', 'ünï', ''] },
      { name: 'runHash:u32', bytes: big.subarray(3, 3 + (300 << 10)), strings: [] },
    ],
  };
}

for (const [name, state] of [
  ['the golden snapshot', GOLDEN_STATE],
  ['a snapshot whose columns are larger than the reader windows', bigState()],
] as const) {
  test(`${name} read where it lies equals its whole decode, its columns found where they lie`, () => {
    const snapshot = encodeSnapshot({ ...GOLDEN_ENVELOPE, state: encodeSnapshotState(state) });
    const whole = decodeSnapshot(snapshot);
    const wholeState = decodeSnapshotState(whole.state);
    const { head, state: read, columns } = readWhere(snapshot);
    assert.deepEqual(
      [head.format, head.logId, head.partition, head.nextOffset, head.takenAt],
      [whole.format, whole.logId, whole.partition, whole.nextOffset, whole.takenAt],
    );
    const columnsWhole = wholeState.closedIndex;
    wholeState.closedIndex = [];
    assert.deepEqual(read, wholeState);
    assert.ok(columnsWhole.length > 0);
    assert.deepEqual(
      columns.map(({ name, strings, position, byteLength }) => ({
        name,
        strings,
        bytes: snapshot.subarray(position, position + byteLength),
      })),
      columnsWhole.map(({ name, strings, bytes }) => ({ name, strings, bytes: new Uint8Array(bytes) })),
    );
  });
}

test("the columns' bytes are not read: a snapshot of 5 MiB of columns reads well under that to find them", () => {
  const snapshot = encodeSnapshot({ ...GOLDEN_ENVELOPE, state: encodeSnapshotState(bigState()) });
  const source = sourceOf(snapshot);
  const head = readSnapshotHead(source);
  const beforeChecksum = source.readBytes;
  verifySnapshotChecksum(source, head);
  const afterChecksum = source.readBytes;
  readSnapshotState(source, head);
  assert.ok(afterChecksum - beforeChecksum >= head.stateLength, 'the checksum reads the state whole');
  assert.ok(source.readBytes - afterChecksum < 1 << 20, `finding the columns read ${source.readBytes - afterChecksum} bytes`);
});

const snapshot = encodeSnapshot({ ...GOLDEN_ENVELOPE, state: encodeSnapshotState(GOLDEN_STATE) });

refusalTests(snapshot, readWhere);

test('a state without its envelope, trailing bytes and another format are refused as Corrupt', () => {
  assert.ok(refused(() => readWhere(encodeSnapshotState(GOLDEN_STATE))));
  assert.ok(refused(() => readWhere(Buffer.concat([snapshot, Buffer.from([0])]))));
  const source = sourceOf(snapshot);
  const head = readSnapshotHead(source);
  assert.ok(refused(() => verifySnapshotChecksum(source, { ...head, format: 2 })));
});

test("the checksum computed on another thread from a file's descriptor: a whole snapshot passes; a flipped byte in its state or in its checksum is Corrupt", async (t) => {
  const dir = await scratchDir(t, 'runlog-snapshot-aside-');
  const bytes = encodeSnapshot({ ...GOLDEN_ENVELOPE, state: encodeSnapshotState(bigState()) });
  const head = readSnapshotHead(sourceOf(bytes));
  const cases: [string, number | null][] = [
    ['whole', null],
    ['a byte of the state', head.stateStart + (head.stateLength >> 1)],
    ['the last byte of the checksum', bytes.length - 1],
  ];
  for (const [what, at] of cases) {
    const damaged = bytes.slice();
    if (at !== null) damaged[at]! ^= 0x10;
    const path = join(dir, `${cases.findIndex(([w]) => w === what)}.snapshot`);
    await writeFile(path, damaged);
    const handle = await open(path, 'r');
    try {
      const source = {
        size: damaged.length,
        fd: handle.fd,
        read: (into: Uint8Array, position: number) => void readSync(handle.fd, into, 0, into.length, position),
      };
      if (at === null) await checksumAside(source, readSnapshotHead(source));
      else await assert.rejects(checksumAside(source, readSnapshotHead(source)), (error) => isRunlogError(error, 'Corrupt'), what);
    } finally {
      await handle.close();
    }
  }
});

test('an array written as a sized block (a negative count, then its byte size, as other Avro writers may) reads the same, whole or where it lies', () => {
  const state = Buffer.from(encodeSnapshotState(GOLDEN_STATE));
  const at = countOffset(GOLDEN_STATE, 'answers'); // the last field: its items, then the array's end (0)
  const count = GOLDEN_STATE.answers.length;
  assert.ok(count > 1 && count < 64 && state[at] === count * 2 && state.at(-1) === 0, 'one block of a one-byte count, then the end');
  const items = state.subarray(at + 1, state.length - 1);
  const sized = Buffer.concat([
    state.subarray(0, at),
    Buffer.from([...avroLong(BigInt(-count)), ...avroLong(BigInt(items.length))]),
    items,
    Buffer.from([0]),
  ]);
  const expected = decodeSnapshotState(state);
  assert.deepEqual(decodeSnapshotState(sized), expected);
  const { state: read } = readWhere(encodeSnapshot({ ...GOLDEN_ENVELOPE, state: sized }));
  const withoutColumns = decodeSnapshotState(state);
  withoutColumns.closedIndex = []; // read where it lies, the columns are found, not read
  assert.deepEqual(read, withoutColumns);
  // The same block said to be a byte longer or shorter than its items: Corrupt, both ways.
  for (const size of [items.length - 1, items.length + 1]) {
    const wrong = Buffer.concat([
      state.subarray(0, at),
      Buffer.from([...avroLong(BigInt(-count)), ...avroLong(BigInt(size))]),
      items,
      Buffer.from([0]),
    ]);
    assert.ok(
      refused(() => decodeSnapshotState(wrong)),
      `size ${size}`,
    );
    assert.ok(
      refused(() => readWhere(encodeSnapshot({ ...GOLDEN_ENVELOPE, state: wrong }))),
      `size ${size}, where it lies`,
    );
  }
});
