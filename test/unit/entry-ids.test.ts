/**
 * Ticket tokens made through the window of blocks encrypted ahead (entry-ids.ts) are the
 * tokens of one block encrypted alone, whatever order sequences are asked in: issued in order,
 * an old entry's id, a jump ahead, several partitions' keys interleaved.
 */
import assert from 'node:assert/strict';
import { createCipheriv } from 'node:crypto';
import { it } from 'node:test';
import fc from 'fast-check';
import { formatEntryId, parseEntryId, sequenceOf } from '../../src/events/entry-ids.ts';

/** The token of `seq` as the ticket id scheme defines it: one AES-128 block of seq (8 bytes, big-endian) and 8 zero bytes. */
function reference(partition: number, seq: number, secret: Uint8Array): string {
  const block = Buffer.alloc(16);
  block.writeUInt32BE(Math.floor(seq / 2 ** 32), 0);
  block.writeUInt32BE(seq >>> 0, 4);
  const cipher = createCipheriv('aes-128-ecb', secret, null).setAutoPadding(false);
  return `${partition}-${Buffer.concat([cipher.update(block), cipher.final()]).toString('base64url')}`;
}

const asks = fc.array(
  fc.oneof(
    fc.record({ key: fc.integer({ min: 0, max: 2 }), step: fc.constant(1) }),
    fc.record({ key: fc.integer({ min: 0, max: 2 }), step: fc.integer({ min: -600, max: 600 }) }),
  ),
  { minLength: 1, maxLength: 400 },
);

it('ticket ids made in any order of sequences equal single-block encryption, and read back', () => {
  fc.assert(
    fc.property(fc.array(fc.uint8Array({ minLength: 16, maxLength: 16 }), { minLength: 3, maxLength: 3 }), asks, (secrets, steps) => {
      const at = [1, 1, 1];
      for (const { key, step } of steps) {
        at[key] = Math.max(1, at[key]! + step);
        const seq = at[key]!;
        const id = formatEntryId(key, seq, secrets[key]!);
        assert.equal(id, reference(key, seq, secrets[key]!));
        const parsed = parseEntryId(id, 3);
        assert.ok(parsed !== null && parsed.token !== null);
        assert.equal(sequenceOf(parsed.token, secrets[key]!), seq);
      }
    }),
    { numRuns: 100 },
  );
});

it('ids of any partition number (up to 6 digits) and any sequence equal the reference', () => {
  fc.assert(
    fc.property(
      fc.uint8Array({ minLength: 16, maxLength: 16 }),
      fc.integer({ min: 0, max: 999_999 }),
      fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }),
      (secret, partition, seq) => assert.equal(formatEntryId(partition, seq, secret), reference(partition, seq, secret)),
    ),
    { numRuns: 500 },
  );
});
