import { runQueueContract } from '../contract/run-queue.contract.ts';
import { openTestKafkaLog } from '../log/kafka-test-support.ts';

const openLog = (partitions: number, t: Parameters<typeof openTestKafkaLog>[0]) => openTestKafkaLog(t, partitions);
runQueueContract('Kafka', openLog, { modelRuns: 8 });
