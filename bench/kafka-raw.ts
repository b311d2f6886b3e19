/**
 * Raw Kafka EventLog append throughput: single-record appends (each its own call, so the
 * writer's group commit decides how many share a transaction) from 64 concurrent callers,
 * on one partition and spread over 8. Not part of npm test.
 *
 *   KAFKA_BROKERS=127.0.0.1:9092 npx tsx bench/kafka-raw.ts [seconds]
 * Without KAFKA_BROKERS it starts the test broker (test/broker/broker.mjs) for the run.
 */
import { randomUUID } from 'node:crypto';
import kafkajs from 'kafkajs';
import { openKafkaLog } from '../src/log/kafka/kafka-log.ts';

const CALLERS = 64;
const seconds = Number(process.argv[2] ?? 10);

interface Result {
  partitions: number;
  appends: number;
  perSecond: number;
  p50Ms: number;
  p99Ms: number;
}

async function measure(brokers: string[], partitions: number): Promise<Result> {
  const topic = `runlog-bench-${randomUUID().slice(0, 8)}`;
  const log = await openKafkaLog({ brokers, topic, partitions });
  const value = new Uint8Array(200).fill(7);
  const latencies: number[] = [];
  try {
    await Promise.all(Array.from({ length: partitions }, (_, p) => log.append(p, [{ key: 'warmup', value }])));
    const until = performance.now() + seconds * 1000;
    await Promise.all(
      Array.from({ length: CALLERS }, async (_, c) => {
        for (let i = 0; performance.now() < until; i++) {
          const started = performance.now();
          await log.append(c % partitions, [{ key: `c${c}/${i}`, value }]);
          latencies.push(performance.now() - started);
        }
      }),
    );
  } finally {
    await log.close();
    await deleteTopic(brokers, topic);
  }
  latencies.sort((a, b) => a - b);
  const at = (q: number): number => Math.round(latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]! * 10) / 10;
  return { partitions, appends: latencies.length, perSecond: Math.round(latencies.length / seconds), p50Ms: at(0.5), p99Ms: at(0.99) };
}

async function deleteTopic(brokers: string[], topic: string): Promise<void> {
  const admin = new kafkajs.Kafka({ brokers, logLevel: kafkajs.logLevel.NOTHING }).admin();
  await admin.connect();
  await admin.deleteTopics({ topics: [topic] }).catch(() => undefined);
  await admin.disconnect();
}

async function main(): Promise<void> {
  let brokers = process.env.KAFKA_BROKERS?.split(',');
  let stop = async (): Promise<void> => {};
  if (!brokers) {
    // @ts-expect-error: plain ESM JavaScript without type declarations
    const { startBroker } = await import('../test/broker/broker.mjs');
    const broker = await startBroker();
    console.log(`started a broker in ${broker.startMs} ms`);
    brokers = [broker.brokers as string];
    stop = () => broker.stop();
  }
  try {
    for (const partitions of [1, 8]) {
      const r = await measure(brokers, partitions);
      console.log(
        `${CALLERS} callers, ${partitions} partition(s): ${r.perSecond} appends/s (${r.appends} in ${seconds} s), latency p50 ${r.p50Ms} ms, p99 ${r.p99Ms} ms`,
      );
    }
  } finally {
    await stop();
  }
}

await main();
