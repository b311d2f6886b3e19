/**
 * The RunQueue contract, run on every log backend (memory, file, Kafka) from this one
 * source: a backend's spec calls `runQueueContract(name, openLog, { modelRuns })`, and
 * every area below (one file each under run-queue/) runs on it.
 *
 * The semantics areas are decider style: given earlier commands, when a command, then the
 * events it appended or the refusal it answered (and then nothing written).
 */
import { describe } from 'node:test';
import type { OpenLog } from './fixtures.ts';
import { argumentsTests } from './run-queue/arguments.ts';
import { attemptsTests } from './run-queue/attempts.ts';
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
}

export function runQueueContract(name: string, openLog: OpenLog, options: RunQueueContractOptions): void {
  describe(`RunQueue semantics on ${name}`, () => {
    submitTests(openLog);
    takeTests(openLog);
    leaseTests(openLog);
    attemptsTests(openLog);
    closeTests(openLog);
    retentionTests(openLog);
    argumentsTests(openLog);
    lifecycleTests(openLog);
  });
  runQueueOwnedValues(name, openLog);
  runQueueRaces(name, openLog);
  runQueueTenants(name, openLog);
  runQueueModelProperty(name, openLog, options.modelRuns);
}
