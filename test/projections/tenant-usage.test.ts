import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { runProjection } from '../../src/projector/run-projection.ts';
import { tenantUsage, tenantUsageRows } from '../../projections/tenant-usage.ts';
import { scenario } from './scenario.ts';

describe('tenantUsage', () => {
  it("counts each tenant's entries, attempts, run time and closes", async (t) => {
    const { log } = await scenario(t);
    const { state } = await runProjection(log, tenantUsage);
    assert.deepEqual(tenantUsageRows(state), [
      { tenant: 'acme', entries: 2, attempts: 2, runMs: 6_000, closed: 2 },
      { tenant: 'globex', entries: 1, attempts: 1, runMs: 250, closed: 1 },
    ]);
    assert.equal(state.open.size, 0, 'closed entries are not followed any more');
  });
});
