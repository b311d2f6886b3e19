import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { runProjection } from '../../src/projector/run-projection.ts';
import { agentOutcomeRows, agentOutcomes } from '../../projections/agent-outcomes.ts';
import { addDuration, emptyDistribution, quantileMs } from '../../projections/durations.ts';
import { scenario } from './scenario.ts';

describe('agentOutcomes', () => {
  it("counts each agent's outcomes, and distributes its waits and runs", async (t) => {
    const { log } = await scenario(t);
    const rows = agentOutcomeRows((await runProjection(log, agentOutcomes)).state);
    assert.deepEqual(
      rows.map(({ agent, submitted, outcomes }) => ({ agent, submitted, outcomes })),
      [
        { agent: 'billing', submitted: 2, outcomes: { succeeded: 1, failed: 1, cancelled: 0, expired: 0, threadDeleted: 0 } },
        { agent: 'email', submitted: 1, outcomes: { succeeded: 0, failed: 0, cancelled: 1, expired: 0, threadDeleted: 0 } },
      ],
    );
    const [billing, email] = rows;
    assert.deepEqual([billing!.wait.count, billing!.wait.sumMs, billing!.wait.minMs, billing!.wait.maxMs], [2, 8_500, 1_000, 7_500]);
    assert.deepEqual([billing!.run.count, billing!.run.sumMs, billing!.run.minMs, billing!.run.maxMs], [3, 6_250, 250, 4_000]);
    assert.equal(quantileMs(billing!.run, 0.5), 2_000, 'the median run lands in the bucket up to 2 s');
    assert.equal(quantileMs(billing!.run, 1), 4_000, 'the largest, capped by the longest seen');
    assert.deepEqual([email!.wait.count, email!.run.count, quantileMs(email!.run, 0.5)], [0, 0, null]);
  });

  it('quantiles land in the bucket of their rank', () => {
    const d = emptyDistribution();
    for (const ms of [0, 3, 3, 40, 900, 1_500, 70_000, 100_000_000]) addDuration(d, ms);
    addDuration(d, -5); // a clock stepped back: counted as 0
    assert.deepEqual(
      [quantileMs(d, 0), quantileMs(d, 0.3), quantileMs(d, 0.5), quantileMs(d, 0.9), quantileMs(d, 1)],
      [1, 5, 50, 100_000_000, 100_000_000],
    );
    assert.deepEqual([d.count, d.minMs, d.maxMs], [9, 0, 100_000_000]);
  });
});
