/** newRunId (takeStarted's run ids): version 4 UUIDs as crypto.randomUUID writes them, never repeated across its pool's refills. */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { newRunId } from '../../src/queue/run-ids.ts';

const V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

it('draws version 4 UUIDs, all different, each bit position taking both values', () => {
  const ids = Array.from({ length: 5_000 }, newRunId); // about 20 refills of the pool
  for (const id of ids) assert.match(id, V4);
  assert.equal(new Set(ids).size, ids.length);
  // Every random hex digit (not the version's, not the variant's two fixed bits) varies.
  for (let at = 0; at < 36; at++) {
    if ([8, 13, 14, 18, 23].includes(at)) continue;
    assert.ok(new Set(ids.map((id) => id[at])).size >= (at === 19 ? 4 : 16), `position ${at} varies`);
  }
});
