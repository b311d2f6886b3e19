/**
 * The RunQueue contract, run on every log backend (memory, file, Kafka) from this one
 * source: a backend's spec calls `runQueueContract(name, openLog, { modelRuns })`, and
 * every area below (one file each under run-queue/) runs on it. A backend may put a transport
 * in front of the queue (`{ transport }`: the HTTP client and a server): the areas then call
 * that, and read what only the queue's process sees (views, replay, sweep) from the queue.
 *
 * The semantics areas are decider style: given earlier commands, when a command, then the
 * events it appended or the refusal it answered (and then nothing written).
 */
import { describe } from 'node:test';
import type { Backend, OpenLog, Transport } from './fixtures.ts';
import { argumentsTests } from './run-queue/arguments.ts';
import { attemptsTests } from './run-queue/attempts.ts';
import { batchTests } from './run-queue/batches.ts';
import { closeTests } from './run-queue/close.ts';
import { leaseTests } from './run-queue/lease.ts';
import { lifecycleTests } from './run-queue/lifecycle.ts';
import { runQueueModelProperty } from './run-queue/model-property.ts';
import { runQueueOwnedValues } from './run-queue/owned-values.ts';
import { runQueueRaces } from './run-queue/races.ts';
import { retentionTests } from './run-queue/retention.ts';
import { submitTests } from './run-queue/submit.ts';
import { takeTests } from './run-queue/take.ts';
import { runQueueTenants } from './run-queue/tenants.ts';

export interface RunQueueContractOptions {
  /** How many random schedules the model-based property runs (fewer on slower backends). */
  modelRuns: number;
  /** What the suite calls: the RunQueue itself unless given (see Backend). */
  transport?: Transport;
  /** False over a transport whose concurrent calls may reach the queue in any order (see Backend.sameTick). */
  sameTick?: boolean;
  /** The queue's closedCacheBytes (default: its default); 0 reads every closed entry back from the log. */
  closedCacheBytes?: number;
}

export function runQueueContract(name: string, openLog: OpenLog, options: RunQueueContractOptions): void {
  const backend: Backend = {
    openLog,
    ...(options.transport ? { transport: options.transport } : {}),
    ...(options.closedCacheBytes === undefined ? {} : { closedCacheBytes: options.closedCacheBytes }),
    sameTick: options.sameTick ?? true,
  };
  describe(`RunQueue semantics on ${name}`, () => {
    submitTests(backend);
    takeTests(backend);
    leaseTests(backend);
    attemptsTests(backend);
    closeTests(backend);
    retentionTests(backend);
    argumentsTests(backend);
    lifecycleTests(backend);
    batchTests(backend);
  });
  runQueueOwnedValues(name, backend);
  runQueueRaces(name, backend);
  runQueueTenants(name, backend);
  runQueueModelProperty(name, backend, options.modelRuns);
}
