/**
 * The contract every EventLog backend passes. A backend's spec calls
 * `eventLogContract(name, open)`; `open` gives a fresh, empty log for each test
 * (it may register its own cleanup on the test context; the contract closes the log).
 * Each area is a file of event-log/, and every backend runs them all.
 *
 * Nothing here assumes a backend: offsets are asserted increasing, not dense (Kafka
 * leaves gaps), and compaction may be asynchronous (Kafka's cleaner), in which case only
 * what holds both before and after compaction is asserted.
 */
import { describe, type TestContext } from 'node:test';
import type { EventLog } from '../../src/log/event-log.ts';
import { appendAndRead } from './event-log/append-read.ts';
import { compaction } from './event-log/compaction.ts';
import { concurrentCallers } from './event-log/concurrency.ts';
import { invalidArguments } from './event-log/invalid-arguments.ts';
import type { LogUnderTest } from './event-log/log-under-test.ts';
import { tail } from './event-log/tail.ts';
import { onCleanup } from '../support/cleanup.ts';

export interface ContractOptions {
  /** compact() has finished compacting when it resolves (memory, file); false for Kafka. */
  compactionIsSynchronous?: boolean;
}

export type OpenLog = (partitions: number, t: TestContext) => Promise<EventLog>;

export function eventLogContract(name: string, open: OpenLog, options: ContractOptions = {}): void {
  const synchronousCompaction = options.compactionIsSynchronous ?? true;

  async function fresh(t: TestContext, partitions = 2): Promise<EventLog> {
    const log = await open(partitions, t);
    onCleanup(t, () => log.close());
    return log;
  }

  const backend: LogUnderTest = { fresh, synchronousCompaction };
  describe(`EventLog contract: ${name}`, () => {
    appendAndRead(backend);
    concurrentCallers(backend);
    tail(backend);
    compaction(backend);
    invalidArguments(backend);
  });
}
