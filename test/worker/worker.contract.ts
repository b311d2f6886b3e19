/**
 * The worker semantics suite, run on every log backend from this one source; each area is a
 * file of semantics/, and every backend runs them all. Time is fake throughout: the store
 * clock is a FakeClock and the worker's timers are manual, so no test sleeps; tests await
 * the worker's events, awaitClosed or waitIdle instead.
 */
import { describe } from 'node:test';
import type { OpenWorkerLog } from './fixtures.ts';
import { ensureFreshTests } from './semantics/ensure-fresh.ts';
import { failureTests } from './semantics/failures.ts';
import { leaseTests } from './semantics/leases.ts';
import { schedulingTests } from './semantics/scheduling.ts';
import { stopTests } from './semantics/stop.ts';

export function workerSemantics(name: string, openLog: OpenWorkerLog): void {
  describe(`Worker semantics on ${name}`, () => {
    failureTests(openLog);
    leaseTests(openLog);
    stopTests(openLog);
    ensureFreshTests(openLog);
    schedulingTests(openLog);
  });
}
