import { runQueueSemantics } from '../contract/run-queue.contract.ts';
import { runQueueModelProperty } from '../contract/run-queue.property.ts';
import { openTestKafkaLog } from '../log/kafka-test-support.ts';

const openLog = (partitions: number, t: Parameters<typeof openTestKafkaLog>[0]) => openTestKafkaLog(t, partitions);
runQueueSemantics('Kafka', openLog);
runQueueModelProperty('Kafka', openLog, 8);
