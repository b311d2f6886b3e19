import { openMemoryLog } from '../../src/log/memory/memory-log.ts';
import { runQueueSemantics } from '../contract/run-queue.contract.ts';
import { runQueueModelProperty } from '../contract/run-queue.property.ts';
import { runQueueOwnedValues } from '../contract/run-queue-owned-values.contract.ts';
import { runQueueRaces } from '../contract/run-queue-races.contract.ts';
import { runQueueTenants } from '../contract/run-queue-tenants.contract.ts';

const openLog = (partitions: number) => openMemoryLog({ partitions });
runQueueSemantics('the memory log', openLog);
runQueueOwnedValues('the memory log', openLog);
runQueueRaces('the memory log', openLog);
runQueueTenants('the memory log', openLog);
runQueueModelProperty('the memory log', openLog, 300);
