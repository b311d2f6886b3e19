/**
 * The compiled writer of snapshots (body-writer.ts, used by snapshot-codec.ts) writes exactly
 * the bytes avsc writes, for every state, and declines whatever it is not sure of (avsc then
 * writes or refuses it, as before): random states, and every field of a state holding every
 * odd value, compared with avsc byte for byte (or refusal for refusal). A state larger than
 * the first buffer it is given is written whole (the buffer grows).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { avroType } from '../../src/events/avro-types.ts';
import { describe } from '../../src/validation/index.ts';
import { compileBodyWriter, resetShort, wroteShort } from '../../src/events/body-writer.ts';
import { RELEASED_SNAPSHOT_SCHEMAS, decodeSnapshotState, encodeSnapshotState } from '../../src/events/snapshot-codec.ts';
import type { PartitionState, SnapshotEntry } from '../../src/events/snapshot-types.ts';
import { long } from './arbitraries.ts';
import { GOLDEN_STATE } from './golden-snapshots.ts';
import { ODD_VALUES } from '../support/odd-values.ts';

const schema = RELEASED_SNAPSHOT_SCHEMAS.filter((s) => s.eventType === 'PartitionState').at(-1)!.schema;
const avsc = avroType(schema);
const writer = compileBodyWriter(schema)!;
const HEADER = 10;

// Well-formed text (a lone surrogate is declined and left to avsc: tested with the odd values).
const text = fc.string({ unit: 'grapheme', maxLength: 30 });
const int = fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 });
const bytes = fc.uint8Array({ maxLength: 200 });
const orNull = <T>(arb: fc.Arbitrary<T>): fc.Arbitrary<T | null> => fc.option(arb, { nil: null });
const record = <T>(model: { [K in keyof T]: fc.Arbitrary<T[K]> }): fc.Arbitrary<T> => fc.record(model, { noNullPrototype: true });
const metadata = fc.dictionary(
  text.filter((k) => k !== '__proto__'),
  text,
  { noNullPrototype: true, maxKeys: 4 },
);

const entry: fc.Arbitrary<SnapshotEntry> = record({
  entryId: text,
  seq: long,
  agent: text,
  input: bytes,
  key: orNull(text),
  priority: int,
  deadline: orNull(long),
  maxAttempts: int,
  metadata,
  submittedAt: long,
  submittedOffset: long,
  notBefore: orNull(long),
  lease: orNull(record({ holder: text, epoch: long, expiresAt: long })),
  lastEpoch: long,
  deferredAttempts: int,
  attempts: fc.array(record({ runId: text, attempt: int, epoch: long, startedAt: long, offset: long }), { maxLength: 3 }),
  outcome: orNull(fc.constantFrom('succeeded' as const, 'failed' as const, 'cancelled' as const)),
  result: orNull(bytes),
  error: orNull(text),
  closedAt: orNull(long),
});

const anyState: fc.Arbitrary<PartitionState> = record({
  lastAt: long,
  issuedThrough: long,
  ticketKey: orNull(record({ secret: bytes, legacyThrough: long })),
  metrics: record({
    enqueued: long,
    processed: long,
    succeeded: long,
    failed: long,
    retried: long,
    expired: long,
    cancelled: long,
    dropped: long,
    totalWaitMs: long,
    maxWaitMs: long,
    totalExecMs: long,
    maxExecMs: long,
  }),
  threads: fc.array(record({ tenant: text, thread: text, open: fc.array(entry, { maxLength: 3 }) }), { maxLength: 3 }),
  closedEntries: fc.array(record({ tenant: text, thread: text, entry }), { maxLength: 2 }),
  closedIndex: fc.array(record({ name: text, bytes, strings: fc.array(text, { maxLength: 3 }) }), { maxLength: 3 }),
  submissionKeys: fc.array(record({ id: text, entryId: text }), { maxLength: 3 }),
  answers: fc.array(
    record({
      tenant: text,
      requestId: text,
      command: fc.constantFrom('submit' as const, 'cancel' as const),
      entryId: orNull(text),
      code: orNull(text),
      message: orNull(text),
      at: long,
      owned: fc.boolean(),
    }),
    { maxLength: 3 },
  ),
});

/** avsc reads bytes from Buffers only: every typed array of `value` as a Buffer over the same memory, as the codec hands them to avsc. */
function withBuffers(value: unknown): unknown {
  if (ArrayBuffer.isView(value)) return Buffer.from(value.buffer, value.byteOffset, value.byteLength);
  if (Array.isArray(value)) return value.map(withBuffers);
  if (value === null || typeof value !== 'object' || Object.getPrototypeOf(value) !== Object.prototype) return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, withBuffers(v)]));
}

/** What avsc writes of `state` (the body), or that it refuses it. */
function avscBody(state: unknown): number[] | 'refused' {
  try {
    return Array.from(avsc.toBuffer(withBuffers(state)));
  } catch {
    return 'refused';
  }
}

/** What the compiled writer writes of `state` (the body), or that it declines it. */
function compiledBody(state: unknown, room = 1 << 20): number[] | 'declined' {
  const buf = Buffer.alloc(room);
  let end: number;
  try {
    end = writer(state as Record<string, unknown>, buf, 0);
  } catch {
    return 'declined'; // as the codec takes a throw (a bigint where an int is)
  }
  return end < 0 ? 'declined' : Array.from(buf.subarray(0, end));
}

/** encodeSnapshotState's bytes after the header, or its refusal's message. */
function encoded(state: unknown): number[] | string {
  try {
    return Array.from(encodeSnapshotState(state as PartitionState).subarray(HEADER));
  } catch (error) {
    return `refused: ${(error as Error).message}`;
  }
}

test('property: the compiled snapshot writer writes exactly what avsc writes', () => {
  fc.assert(
    fc.property(anyState, (state) => {
      assert.deepEqual(compiledBody(state), avscBody(state), 'compiled');
      assert.deepEqual(encoded(state), avscBody(state), 'codec');
      const bytes = encodeSnapshotState(state);
      assert.deepEqual(Array.from(encodeSnapshotState(decodeSnapshotState(bytes))), Array.from(bytes), 'read back');
    }),
    { numRuns: 300 },
  );
});

/** Every place a value sits in GOLDEN_STATE: top-level fields, an entry's, its lease's, its attempt's, a column's, an answer's. */
function places(): Array<(value: unknown) => unknown> {
  const at = (path: readonly (string | number)[]) => (value: unknown) => {
    const copy = structuredClone(GOLDEN_STATE) as unknown as Record<string | number, unknown>;
    let holder = copy;
    for (const step of path.slice(0, -1)) holder = holder[step] as Record<string | number, unknown>;
    holder[path.at(-1)!] = value;
    return copy;
  };
  const fieldsOf = (path: readonly (string | number)[], value: object): Array<(value: unknown) => unknown> =>
    Object.keys(value).map((name) => at([...path, name]));
  const open = GOLDEN_STATE.threads[0]!.open[0]!;
  return [
    ...fieldsOf([], GOLDEN_STATE),
    ...fieldsOf(['threads', 0], GOLDEN_STATE.threads[0]!),
    ...fieldsOf(['threads', 0, 'open', 0], open),
    ...fieldsOf(['threads', 0, 'open', 0, 'lease'], open.lease!),
    ...fieldsOf(['threads', 0, 'open', 0, 'attempts', 0], open.attempts[0]!),
    ...fieldsOf(['closedIndex', 0], GOLDEN_STATE.closedIndex[0]!),
    ...fieldsOf(['answers', 0], GOLDEN_STATE.answers[0]!),
    ...fieldsOf(['metrics'], GOLDEN_STATE.metrics),
  ];
}

test('every field holding an odd value: the compiled writer writes what avsc does or declines it; the codec never writes other bytes', () => {
  for (const [n, place] of places().entries()) {
    for (const value of ODD_VALUES) {
      const state = place(value);
      const written = compiledBody(state);
      const expected = avscBody(state);
      if (written !== 'declined') assert.deepEqual(written, expected);
      // The codec writes avsc's bytes or refuses (as before, a value its copy for avsc cannot read is refused too).
      const answer = encoded(state);
      if (expected === 'refused') assert.match(String(answer), /^refused: /, `${describe(value)} at place ${n}`);
      else if (typeof answer !== 'string') assert.deepEqual(answer, expected);
    }
  }
});

test('short of room the writer declines saying so, and a state larger than the first buffer is encoded whole', () => {
  const body = avscBody(GOLDEN_STATE) as number[];
  for (let room = 0; room < body.length; room += 7) {
    resetShort();
    assert.equal(compiledBody(GOLDEN_STATE, room), 'declined');
    assert.ok(wroteShort(), `room ${room}`);
  }
  const open = Array.from({ length: 3_000 }, (_, i) => ({ ...GOLDEN_STATE.threads[0]!.open[1]!, entryId: `0-${i}`, seq: i }));
  const large: PartitionState = { ...GOLDEN_STATE, threads: [{ tenant: 'acme', thread: 'big', open }] };
  assert.deepEqual(encoded(large), avscBody(large));
  assert.ok(encodeSnapshotState(large).length > 100_000);
});
