import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createNoopMeter, metrics, type Attributes, type Meter } from '@opentelemetry/api';
import { WorkerMetrics } from '../../src/worker/worker-metrics.ts';

/** A meter that records what is added to each counter, so the names the worker exports can be read. */
function recordingMeter(): { meter: Meter; added: Map<string, { n: number; attributes?: Attributes }[]> } {
  const noop = createNoopMeter();
  const added = new Map<string, { n: number; attributes?: Attributes }[]>();
  const meter: Meter = Object.assign(Object.create(noop) as Meter, {
    createCounter: (name: string) => {
      added.set(name, []);
      return { add: (n: number, attributes?: Attributes) => added.get(name)!.push({ n, attributes }) };
    },
  });
  return { meter, added };
}

describe('worker metrics', () => {
  it('a lost lease is counted as leasesLost, exported as runlog.worker.leases_lost; nothing is called expired', (t) => {
    const { meter, added } = recordingMeter();
    metrics.setGlobalMeterProvider({ getMeter: () => meter });
    t.after(() => metrics.disable());
    const worker = new WorkerMetrics();
    worker.add('leasesLost', 'billing');
    assert.equal(worker.snapshot().leasesLost, 1);
    assert.deepEqual(added.get('runlog.worker.leases_lost'), [{ n: 1, attributes: { agent: 'billing' } }]);
    assert.ok(!('expired' in worker.snapshot()), 'the worker has no expired count');
    assert.deepEqual(
      [...added.keys()].filter((name) => name.includes('expired')),
      [],
      'no worker instrument is named expired',
    );
  });
});
