import assert from 'node:assert/strict';
import { it } from 'node:test';
import fc from 'fast-check';
import { hash32, hash32After, hash32Seed } from '../../projections/hash32.ts';

const hash32Of3 = (a: string, b: string, c: string): number => hash32After(hash32Seed(a, b), c);

it('hash32After(hash32Seed(a, b), c) equals hash32 of its parts joined by NUL (the ticket index stores these hashes: never two values for one name)', () => {
  fc.assert(
    fc.property(fc.string({ unit: 'binary' }), fc.string({ unit: 'binary' }), fc.string({ unit: 'binary' }), (a, b, c) => {
      assert.equal(hash32Of3(a, b, c), hash32(`${a}\u0000${b}\u0000${c}`));
    }),
    { numRuns: 5000 },
  );
  assert.notEqual(hash32Of3('a', 'b', 'c'), hash32Of3('a', 'bc', ''));
});
