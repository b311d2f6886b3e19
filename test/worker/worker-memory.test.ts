import type { EventLog } from '../../src/log/event-log.ts';
import { wrapLog } from '../support/wrap-log.ts';
import { openMemoryLog } from '../../src/log/memory/memory-log.ts';
import { workerSemantics } from './worker.contract.ts';

/** A memory log that outlives a queue's stop: each open hands out a view whose close does nothing. */
function reopenable(log: EventLog) {
  const view = wrapLog(log, { close: async () => {} });
  return { open: async (): Promise<EventLog> => view };
}

workerSemantics('the memory log', async (partitions) => reopenable(await openMemoryLog({ partitions })));
