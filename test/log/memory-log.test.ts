import { openMemoryLog } from '../../src/log/memory/memory-log.ts';
import { eventLogContract } from '../contract/event-log.contract.ts';

eventLogContract('memory', (partitions) => openMemoryLog({ partitions }));
