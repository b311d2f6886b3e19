import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { runProjection } from '../../src/projector/run-projection.ts';
import { entrySummaries } from '../../projections/entry-summaries.ts';
import { partitionOfEntryId } from '../../src/queue/entry-id.ts';
import { scenario } from './scenario.ts';

describe('entrySummaries', () => {
  it('summarises each entry: who, how far it got, how it ended; pruned ones say when', async (t) => {
    const { log, queue, clock, t0, a, b, c } = await scenario(t);
    const { state } = await runProjection(log, entrySummaries);
    const base = { key: null, metadata: {}, maxAttempts: 10, prunedAt: null, submittedAt: t0 };
    assert.deepEqual(state.get(a), {
      ...base,
      entryId: a,
      partition: partitionOfEntryId(a, 4),
      tenant: 'acme',
      thread: 'order-1',
      agent: 'billing',
      attempts: 2,
      status: 'closed',
      outcome: 'failed',
      closedAt: t0 + 7_500,
      lastError: 'Error: timeout after 15000 ms',
      holder: 'w',
    });
    assert.deepEqual(
      [state.get(b)!.status, state.get(b)!.outcome, state.get(b)!.attempts, state.get(b)!.holder, state.get(b)!.closedAt],
      ['closed', 'cancelled', 0, null, t0 + 7_750],
    );
    assert.deepEqual([state.get(c)!.tenant, state.get(c)!.outcome, state.get(c)!.lastError], ['globex', 'succeeded', null]);
    assert.equal(state.size, 3);

    // A prune is recorded on the summaries it names; they stay findable.
    clock.advance(60_000);
    assert.equal(await queue.prune(1_000, 100), 3);
    const after = (await runProjection(log, entrySummaries)).state;
    assert.deepEqual(
      [a, b, c].map((id) => after.get(id)!.prunedAt),
      [clock.nowMs, clock.nowMs, clock.nowMs],
    );
  });
});
