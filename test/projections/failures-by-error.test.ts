import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { runProjection } from '../../src/projector/run-projection.ts';
import { errorSignature, failureGroups, failuresByError } from '../../projections/failures-by-error.ts';
import { scenario } from './scenario.ts';

describe('failuresByError', () => {
  it('groups failed attempts by their error, numbers aside', async (t) => {
    const { log, t0, a } = await scenario(t);
    assert.deepEqual(failureGroups((await runProjection(log, failuresByError)).state), [
      {
        signature: 'Error: timeout after # ms',
        sample: 'Error: timeout after 15000 ms',
        attempts: 2,
        entries: 1,
        agents: { billing: 2 },
        firstAt: t0 + 3_000,
        lastAt: t0 + 7_500,
        lastEntryId: a,
      },
    ]);
  });

  it('signs an error by its first line, digits as #, at most 200 characters', () => {
    assert.equal(errorSignature('  HTTP 503 from 10.0.0.7\n    at fetch (x.js:1:2)'), 'HTTP # from #.#.#.#');
    assert.equal(errorSignature('x'.repeat(300)).length, 200);
  });
});
