/** What each area of the EventLog contract gets from the backend's spec (see ../event-log.contract.ts). */
import type { TestContext } from 'node:test';
import type { EventLog } from '../../../src/log/event-log.ts';

export interface LogUnderTest {
  /** A fresh, empty log of `partitions` (2 unless told), closed after the test. */
  fresh(t: TestContext, partitions?: number): Promise<EventLog>;
  /** compact() has finished compacting when it resolves (memory, file); false for Kafka. */
  synchronousCompaction: boolean;
}
