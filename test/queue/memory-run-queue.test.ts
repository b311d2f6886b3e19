import { openMemoryLog } from '../../src/log/memory/memory-log.ts';
import { runQueueContract } from '../contract/run-queue.contract.ts';

const openLog = (partitions: number) => openMemoryLog({ partitions });
runQueueContract('the memory log', openLog, { modelRuns: 300 });
