import type { EventLog } from '../../src/log/event-log.ts';
import { openMemoryLog } from '../../src/log/memory/memory-log.ts';
import { workerSemantics } from './worker.contract.ts';

/** A memory log that outlives a queue's stop: each open hands out a view whose close does nothing. */
function reopenable(log: EventLog) {
  const view: EventLog = {
    kind: log.kind,
    partitions: log.partitions,
    maxRecordBytes: log.maxRecordBytes,
    maxAppendBytes: log.maxAppendBytes,
    append: (partition, records) => log.append(partition, records),
    read: (partition, from, options) => log.read(partition, from, options),
    tail: (partition, from, options) => log.tail(partition, from, options),
    endOffset: (partition) => log.endOffset(partition),
    compact: (partition) => log.compact(partition),
    close: async () => {},
  };
  return { open: async (): Promise<EventLog> => view };
}

workerSemantics('the memory log', async (partitions) => reopenable(await openMemoryLog({ partitions })));
