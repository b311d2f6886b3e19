import { reopenableMemoryLog } from './fixtures.ts';
import { workerSemantics } from './worker.contract.ts';

workerSemantics('the memory log', reopenableMemoryLog);
