/**
 * The worker semantics suite, run on every log backend from this one source; each area is a
 * file of semantics/, and every backend runs them all. Time is fake throughout: the store
 * clock is a FakeClock and the worker's timers are manual, so no test sleeps; tests await
 * the worker's events, awaitClosed or waitIdle instead.
 */
import { describe } from 'node:test';
import type { Transport } from '../contract/fixtures.ts';
import type { OpenWorkerLog, WorkerBackend } from './fixtures.ts';
import { ensureFreshTests } from './semantics/ensure-fresh.ts';
import { failureTests } from './semantics/failures.ts';
import { leaseTests } from './semantics/leases.ts';
import { schedulingTests } from './semantics/scheduling.ts';
import { stopTests } from './semantics/stop.ts';

/** `transport`: what the workers call, in front of the queue (the HTTP client and a server); the RunQueue itself unless given. */
export function workerSemantics(name: string, openLog: OpenWorkerLog, options: { transport?: Transport } = {}): void {
  const backend: WorkerBackend = { openLog, ...(options.transport ? { transport: options.transport } : {}) };
  describe(`Worker semantics on ${name}`, () => {
    failureTests(backend);
    leaseTests(backend);
    stopTests(backend);
    ensureFreshTests(backend);
    schedulingTests(backend);
  });
}
