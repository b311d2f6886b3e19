/**
 * The replay's decoder (codec.ts foldDecoder, with the view's FOLD_UNREAD): records of the types
 * the fold keeps nothing of, of their newest schema, are read into one reused object per type,
 * their tenant and thread left ''; every other field equals what decodeEvent reads, and every
 * other record (other types, older schemas resolved through avsc) decodes whole. What it
 * refuses, it refuses as decodeEventAt does, with the same message.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { test } from 'node:test';
import fc from 'fast-check';
import { decodeEvent, decodeEventAt, encodeEvent, eventFoldDecoder } from '../../src/events/codec.ts';
import { isRunlogError } from '../../src/errors.ts';
import { FOLD_UNREAD } from '../../projections/partition-view.ts';
import { GOLDEN_EVENTS } from './golden-events.ts';
import { anyEvent } from './arbitraries.ts';

const fold = eventFoldDecoder(FOLD_UNREAD);

/** The record's bytes with something before and after them, as a read buffer holds them. */
function inBuffer(bytes: Uint8Array): { buf: Buffer; start: number; end: number } {
  return { buf: Buffer.concat([Buffer.from('before'), bytes, Buffer.from('after')]), start: 6, end: 6 + bytes.length };
}

/** decodeEvent's event, with the fields the fold does not read ('') as the fold decoder leaves them. */
function asFoldReads(event: Record<string, unknown>): Record<string, unknown> {
  const unread = (FOLD_UNREAD as Record<string, readonly string[] | undefined>)[event.type as string] ?? [];
  return { ...event, ...Object.fromEntries(unread.map((field) => [field, ''])) };
}

test('golden records: the fold decoder reads what decodeEvent reads, minus the unread fields of the newest schemas only', async () => {
  let skipped = 0;
  for (const name of Object.keys(GOLDEN_EVENTS)) {
    const bytes = await readFile(new URL(`../fixtures/golden/${name}`, import.meta.url));
    const whole = decodeEvent(bytes) as unknown as Record<string, unknown>;
    const { buf, start, end } = inBuffer(bytes);
    const got = { ...(fold(buf, start, end) as unknown as Record<string, unknown>) };
    const newest =
      encodeEvent(whole as never).length === bytes.length && Buffer.compare(Buffer.from(encodeEvent(whole as never)), bytes) === 0;
    const unread = newest && (FOLD_UNREAD as Record<string, unknown>)[whole.type as string] !== undefined;
    assert.deepEqual(got, unread ? asFoldReads(whole) : whole, name);
    if (unread) skipped++;
  }
  assert.ok(skipped >= 5, `the unread fields were skipped in ${skipped} golden records`);
});

test('any event: equal to decodeEvent but for the unread fields; one object per type, reused; cut records refused alike', () => {
  fc.assert(
    fc.property(anyEvent, (event) => {
      const bytes = encodeEvent(event);
      const { buf, start, end } = inBuffer(bytes);
      const got = fold(buf, start, end) as unknown as Record<string, unknown>;
      assert.deepEqual({ ...got }, asFoldReads(decodeEvent(bytes) as unknown as Record<string, unknown>));
      if ((FOLD_UNREAD as Record<string, unknown>)[event.type] !== undefined) assert.equal(fold(buf, start, end), got, 'reused');
      else assert.notEqual(fold(buf, start, end), got, 'a new event each time');
      for (const cut of [1, 9, 10, bytes.length >> 1, bytes.length - 1]) {
        const expected = catching(() => decodeEventAt(buf, start, start + cut));
        const refused = catching(() => fold(buf, start, start + cut));
        assert.ok(isRunlogError(expected) && isRunlogError(refused), `cut at ${cut}`);
        assert.equal((refused as Error).message, (expected as Error).message, `cut at ${cut}`);
      }
    }),
    { numRuns: 300 },
  );
});

function catching(body: () => unknown): unknown {
  try {
    return body();
  } catch (error) {
    return error;
  }
}
