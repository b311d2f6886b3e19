/**
 * A real log with some of its parts replaced, for faults and probes by wrapping a real
 * object (never a fake). Every required part of the EventLog passes straight through to
 * `log` unless `replace` gives it; the optional ones (appendsInFlight, claim) are left out
 * unless `replace` gives them, so a wrapper says what it keeps of them.
 */
import type { EventLog } from '../../src/log/event-log.ts';

export function wrapLog<R extends Partial<EventLog>>(log: EventLog, replace: R): EventLog & R {
  return {
    kind: log.kind,
    partitions: log.partitions,
    maxRecordBytes: log.maxRecordBytes,
    maxAppendBytes: log.maxAppendBytes,
    append: (partition, records, options) => log.append(partition, records, options),
    read: (partition, from, options) => log.read(partition, from, options),
    tail: (partition, from, options) => log.tail(partition, from, options),
    endOffset: (partition) => log.endOffset(partition),
    compact: (partition) => log.compact(partition),
    close: () => log.close(),
    ...replace,
  };
}
