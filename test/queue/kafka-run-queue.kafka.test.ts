import { runQueueSemantics } from '../contract/run-queue.contract.ts';
import { runQueueModelProperty } from '../contract/run-queue.property.ts';
import { runQueueOwnedValues } from '../contract/run-queue-owned-values.contract.ts';
import { runQueueRaces } from '../contract/run-queue-races.contract.ts';
import { runQueueTenants } from '../contract/run-queue-tenants.contract.ts';
import { openTestKafkaLog } from '../log/kafka-test-support.ts';

const openLog = (partitions: number, t: Parameters<typeof openTestKafkaLog>[0]) => openTestKafkaLog(t, partitions);
runQueueSemantics('Kafka', openLog);
runQueueOwnedValues('Kafka', openLog);
runQueueRaces('Kafka', openLog);
runQueueTenants('Kafka', openLog);
runQueueModelProperty('Kafka', openLog, 8);
