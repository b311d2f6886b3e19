import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { RELEASED_SCHEMAS, createCodec, decodeEvent, encodeEvent, schemaFor, writerSchemaFingerprint } from '../../src/events/codec.ts';
import { loadSchemaDir } from '../../src/events/schemas.ts';
import { slotOf } from '../../src/events/string-cache.ts';
import { EVENT_TYPES, type RunlogEvent, type Submitted } from '../../src/events/types.ts';
import { isRunlogError, type ErrorCode } from '../../src/errors.ts';
import { GOLDEN_EVENTS } from './golden-events.ts';
import { LONG_LIMIT, anyEvent } from './arbitraries.ts';
import { avroLong, avroString, singleObject } from './avro-bytes.ts';
import { ODD_VALUES } from '../support/odd-values.ts';

const samples = Object.values(GOLDEN_EVENTS);
const leased = GOLDEN_EVENTS['Leased.v1.bin'] as RunlogEvent & { type: 'Leased' };
const submitted = GOLDEN_EVENTS['Submitted.v1.bin'] as Submitted;

function fails(code: ErrorCode, fn: () => unknown, message: RegExp): void {
  assert.throws(fn, (e: unknown) => isRunlogError(e, code) && message.test(e.message));
}

const leasedBody = (epoch: number[]): number[] => [
  ...avroString(leased.tenant),
  ...avroString(leased.thread),
  ...avroString(leased.entryId),
  ...avroLong(leased.at),
  ...avroString(leased.holder),
  ...epoch,
  ...avroLong(leased.expiresAt),
  ...avroLong(leased.deferredAttempts), // an Avro int: the same zig-zag varint as a long
];

test('every event type round-trips', () => {
  assert.deepEqual(new Set(samples.map((e) => e.type)), new Set(EVENT_TYPES));
  for (const event of samples) assert.deepEqual(decodeEvent(encodeEvent(event)), event);
});

test('edge values round-trip: empty metadata, null optionals, big input, extreme longs', () => {
  const edges: Submitted[] = [
    { ...submitted, metadata: {}, key: null, notBefore: null, deadline: null, input: new Uint8Array() },
    { ...submitted, input: new Uint8Array(1 << 20).map((_, i) => i % 251), at: LONG_LIMIT, seq: -LONG_LIMIT },
    { ...submitted, agent: '', tenant: 'ü😀\u0000', metadata: { '': '', 'k\u0000': 'v' } },
  ];
  for (const event of edges) assert.deepEqual(decodeEvent(encodeEvent(event)), event);
});

test('decoded events are plain objects with plain Uint8Arrays, independent of the input bytes', () => {
  const bytes = encodeEvent(submitted);
  const event = decodeEvent(bytes) as Submitted;
  assert.equal(Object.getPrototypeOf(event), Object.prototype);
  assert.equal(Object.getPrototypeOf(event.input), Uint8Array.prototype);
  bytes.fill(0);
  assert.deepEqual(event.input, submitted.input);
});

test('the body is plain Avro binary (checked against a hand-built Leased record)', () => {
  const expected = singleObject(writerSchemaFingerprint('Leased'), leasedBody(avroLong(leased.epoch)));
  assert.deepEqual(encodeEvent(leased), expected);
});

test('property: any event round-trips', () => {
  fc.assert(
    fc.property(anyEvent, (event) => assert.deepEqual(decodeEvent(encodeEvent(event)), event)),
    { numRuns: 500 },
  );
});

// avsc trusts a damaged map or array count (it may loop for ages or run out of memory), so
// damaged bytes are compared only for events without maps and arrays; cut-short ones for all.
const WITHOUT_BLOCKS = new Set<string>(EVENT_TYPES.filter((type) => type !== 'Submitted' && type !== 'EntriesPruned'));

/**
 * avsc reads a damaged int varint of more than 32 bits as a number beyond the int range; the
 * compiled readers refuse it as Corrupt. What avsc read counts only if it is a valid event
 * (one encodeEvent accepts); otherwise Corrupt is the right answer.
 */
function validOrCorrupt(read: unknown): unknown {
  if (read === 'Corrupt') return read;
  try {
    encodeEvent(read as RunlogEvent);
    return read;
  } catch {
    return 'Corrupt';
  }
}

test('property: compiled body readers read exactly as avsc does, also damaged records (or both refuse them as Corrupt)', () => {
  const avscOnly = createCodec(RELEASED_SCHEMAS, { bodyReaders: false });
  const outcome = (decode: () => RunlogEvent): unknown => {
    try {
      return decode();
    } catch (error) {
      assert.ok(isRunlogError(error, 'Corrupt'), String(error));
      return 'Corrupt';
    }
  };
  const damage = fc.record({ at: fc.nat(), xor: fc.integer({ min: 1, max: 255 }), cut: fc.nat() });
  fc.assert(
    fc.property(anyEvent, damage, (event, { at, xor, cut }) => {
      const bytes = encodeEvent(event);
      const body = 10 + (at % Math.max(bytes.length - 10, 1));
      const damaged = Uint8Array.from(bytes);
      if (body < damaged.length) damaged[body]! ^= xor;
      const cutShort = bytes.subarray(0, 10 + (cut % Math.max(bytes.length - 10, 1)));
      const inputs = WITHOUT_BLOCKS.has(event.type) ? [bytes, damaged, cutShort] : [bytes, cutShort];
      for (const input of inputs)
        assert.deepEqual(
          outcome(() => decodeEvent(input)),
          validOrCorrupt(outcome(() => avscOnly.decode(input))),
        );
    }),
    { numRuns: 1000 },
  );
});

function encodeOutcome(encode: () => Uint8Array): unknown {
  try {
    return Array.from(encode());
  } catch (error) {
    assert.ok(isRunlogError(error, 'InvalidArgument'), String(error));
    return error.message;
  }
}

test('property: compiled body writers write exactly what avsc writes, and leave every refusal to it (same message)', () => {
  const avscOnly = createCodec(RELEASED_SCHEMAS, { bodyReaders: false });
  const same = (event: RunlogEvent): void =>
    assert.deepEqual(
      encodeOutcome(() => encodeEvent(event)),
      encodeOutcome(() => avscOnly.encode(event)),
    );
  fc.assert(fc.property(anyEvent, same), { numRuns: 1000 });
  // Every field of every event type holding every odd value, and missing.
  for (const event of samples) {
    for (const name of Object.keys(event).filter((n) => n !== 'type')) {
      for (const value of ODD_VALUES) same({ ...event, [name]: value } as RunlogEvent);
      const { [name]: _, ...missing } = event as unknown as Record<string, unknown>;
      same(missing as unknown as RunlogEvent);
    }
  }
});

test('encoded records are independent copies: changing one changes no other', () => {
  const encoded = samples.map(encodeEvent);
  const expected = encoded.map((bytes) => Array.from(bytes));
  for (const [i, bytes] of encoded.entries()) {
    bytes.fill(0xff);
    encoded.slice(i + 1).forEach((later, j) => assert.deepEqual(Array.from(later), expected[i + 1 + j]));
  }
  assert.ok(samples.every((event) => Object.getPrototypeOf(encodeEvent(event)) === Uint8Array.prototype));
});

/** The string cache's slot of a short string's bytes (string-cache.ts; body-reader.ts's names' cache has 4096 slots, its ids' 1024). */
function internSlot(text: string): number {
  const bytes = Buffer.from(text);
  return slotOf(bytes, 0, bytes.length, 4096);
}

test('interned fields read what the record holds, also when its buffer is reused and another string shares the cache slot', () => {
  // Two tenants of one length in one slot: among 4097 fixed-width names, two share one of the 4096 slots.
  const seen = new Map<number, string>();
  let first = '';
  let second = '';
  for (let i = 0; second === ''; i++) {
    const name = `tenant-${String(i).padStart(6, '0')}`;
    first = seen.get(internSlot(name)) ?? '';
    if (first !== '') second = name;
    seen.set(internSlot(name), name);
  }
  const scratch = Buffer.alloc(4096);
  const readBack = (event: RunlogEvent): RunlogEvent => {
    const bytes = encodeEvent(event);
    scratch.set(bytes, 7); // the same place of one reused buffer, as the file log's reader reuses its chunk
    return decodeEvent(new Uint8Array(scratch.buffer, scratch.byteOffset + 7, bytes.length));
  };
  // Names and entry ids have caches of their own, of 4096 and 1024 slots: two strings in one of 4096 are in one of 1024 too.
  for (const tenant of [first, second, first, second, second, first]) {
    const read = readBack({ ...leased, tenant, holder: tenant, entryId: tenant }) as typeof leased;
    assert.deepEqual([read.tenant, read.holder, read.entryId], [tenant, tenant, tenant]);
  }
  fc.assert(
    fc.property(anyEvent, (event) => assert.deepEqual(readBack(event), event)),
    { numRuns: 500 },
  );
});

test('malformed records are Corrupt, with a message naming the fault', () => {
  const good = encodeEvent(leased);
  fails('Corrupt', () => decodeEvent(new Uint8Array()), /0 bytes is shorter/);
  fails('Corrupt', () => decodeEvent(good.subarray(0, 9)), /shorter than the 10-byte/);
  fails('Corrupt', () => decodeEvent(Uint8Array.from([0xc3, 0x02, ...good.subarray(2)])), /bad single-object marker 0xc3 0x02/);
  const badFp = Uint8Array.from(good);
  badFp[9]! ^= 0xff;
  fails('Corrupt', () => decodeEvent(badFp), /unknown writer schema fingerprint 0x/);
  for (const event of samples) {
    const bytes = encodeEvent(event);
    fails('Corrupt', () => decodeEvent(bytes.subarray(0, bytes.length - 1)), /truncated or malformed/);
    fails('Corrupt', () => decodeEvent(Uint8Array.from([...bytes, 0])), /1 trailing bytes after the .*\.v\d+\.avsc body/);
  }
});

test('records read as subarrays of one shared chunk decode alone, never into their neighbours', () => {
  const encoded = samples.map(encodeEvent);
  const chunk = new Uint8Array(encoded.reduce((n, b) => n + b.length, 0) + 3);
  let at = 3;
  const views = encoded.map((b) => {
    chunk.set(b, at);
    at += b.length;
    return chunk.subarray(at - b.length, at);
  });
  views.forEach((view, i) => assert.deepEqual(decodeEvent(view), samples[i]));
  for (const view of views.slice(0, -1)) {
    const short = chunk.subarray(view.byteOffset, view.byteOffset + view.length - 1);
    fails('Corrupt', () => decodeEvent(short), /truncated or malformed|invalid|trailing/);
  }
});

test('invalid values inside a body are Corrupt', () => {
  const fp = writerSchemaFingerprint('Leased');
  fails('Corrupt', () => decodeEvent(singleObject(fp, leasedBody(avroLong(2 ** 53)))), /beyond Number.MAX_SAFE_INTEGER/);
  fails('Corrupt', () => decodeEvent(singleObject(fp, leasedBody(avroLong(-(2n ** 63n))))), /beyond Number.MAX_SAFE_INTEGER/);
  fails('Corrupt', () => decodeEvent(singleObject(fp, [...avroLong(-5), ...leasedBody(avroLong(1)).slice(1)])), /truncated or malformed/);
  const closed = [...avroString('t'), ...avroString('th'), ...avroString('e'), ...avroLong(1)];
  const closedFp = writerSchemaFingerprint('Closed');
  fails('Corrupt', () => decodeEvent(singleObject(closedFp, [...closed, ...avroLong(9), 0, 0])), /invalid .*Outcome enum index: 9/);
  fails('Corrupt', () => decodeEvent(singleObject(closedFp, [...closed, 0, ...avroLong(3), 0])), /invalid union index: 3/);
});

test('events that would not read back as written are InvalidArgument', () => {
  fails('InvalidArgument', () => encodeEvent({ ...leased, epoch: 2 ** 53 }), /epoch = 9007199254740992 is not a valid/);
  fails('InvalidArgument', () => encodeEvent({ ...leased, epoch: 1.5 }), /epoch = 1\.5/);
  fails('InvalidArgument', () => encodeEvent({ ...leased, holder: 'a\ud800' }), /Leased: holder holds a lone UTF-16 surrogate/);
  fails('InvalidArgument', () => encodeEvent({ ...submitted, metadata: JSON.parse('{"__proto__":"x"}') }), /metadata/);
  fails('InvalidArgument', () => encodeEvent({ ...submitted, strategy: 'later' as 'reject' }), /strategy = "later"/);
  fails('InvalidArgument', () => encodeEvent({ type: 'Nope' } as unknown as RunlogEvent), /unknown type "Nope"/);
});

test('schemaFor and writerSchemaFingerprint describe the current schema', () => {
  for (const type of EVENT_TYPES) {
    assert.equal(schemaFor(type).name, type);
    assert.deepEqual([...encodeEvent(samples.find((e) => e.type === type)!).subarray(2, 10)], [...leBytes(writerSchemaFingerprint(type))]);
  }
  assert.ok(Object.isFrozen(schemaFor('Submitted').fields[0]));
});

test('evolution: records of an older writer schema resolve to the current reader schema', () => {
  const v0 = loadSchemaDir(new URL('../fixtures/schemas/', import.meta.url));
  const bytes = createCodec(v0).encode(submitted); // v0 has no deadline, no metadata
  fails('Corrupt', () => decodeEvent(bytes), /unknown writer schema fingerprint/); // v0 was never released
  const current = createCodec([...RELEASED_SCHEMAS, ...v0]);
  assert.deepEqual(current.decode(bytes), { ...submitted, deadline: null, metadata: {} });
});

test('evolution: committed v1 records stay readable by a newer reader schema', () => {
  const next = loadSchemaDir(new URL('../fixtures/schemas-next/', import.meta.url));
  const newer = createCodec([...RELEASED_SCHEMAS, ...next]);
  assert.deepEqual(newer.decode(encodeEvent(submitted)), { ...submitted, labels: [] });
  assert.deepEqual(newer.decode(encodeEvent(leased)), leased);
});

function leBytes(fp: bigint): Uint8Array {
  const out = new Uint8Array(8);
  new DataView(out.buffer).setBigUint64(0, fp, true);
  return out;
}
