import { openMemoryLog } from '../../src/log/memory/memory-log.ts';
import { runQueueSemantics } from '../contract/run-queue.contract.ts';

runQueueSemantics('the memory log', (partitions) => openMemoryLog({ partitions }));
