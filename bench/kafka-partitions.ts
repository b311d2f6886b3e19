/**
 * Kafka lifecycles/s on 1 partition against the default topic's 8, interleaved in the same
 * run (the machine is shared: only figures of the same minutes compare). Per window it prints
 * the rate, how many commands one transaction carried (the log's appends and records in the
 * window), the CPU this process and the broker used (the broker's from /proc, when
 * KAFKA_BROKER_PID names it), and the load average. Not part of npm test.
 *
 *   KAFKA_BROKERS=127.0.0.1:9092 [KAFKA_BROKER_PID=n] node --import tsx bench/kafka-partitions.ts [rounds] [seconds] [partition counts, e.g. 1,8]
 */
import os from 'node:os';
import { readFileSync } from 'node:fs';
import { createLogSite } from './logs.ts';
import { concurrently, lifecycle } from './throughput.ts';
import { openRunQueue } from '../src/queue/open-run-queue.ts';
import type { KafkaEventLog } from '../src/log/kafka/kafka-log.ts';

const CALLERS = 64;
const rounds = Number(process.argv[2] ?? 3);
const seconds = Number(process.argv[3] ?? 5);
const counts = (process.argv[4] ?? '1,8').split(',').map(Number);
const brokerPid = process.env.KAFKA_BROKER_PID === undefined ? null : Number(process.env.KAFKA_BROKER_PID);
const TICKS_PER_SECOND = 100;

/** The broker's user+system CPU seconds so far, or null. */
function brokerCpuSeconds(): number | null {
  if (brokerPid === null) return null;
  const fields = readFileSync(`/proc/${brokerPid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
}

async function window(partitions: number): Promise<string> {
  const site = await createLogSite('kafka', `partitions-${partitions}`, partitions);
  const queue = await openRunQueue({ log: site.config, partitions });
  try {
    await concurrently(CALLERS, 1_000, (caller, n) => lifecycle(queue, caller, n));
    const log = queue.log as KafkaEventLog;
    const before = log.stats();
    const cpu = process.cpuUsage();
    const broker = brokerCpuSeconds();
    const rate = await concurrently(CALLERS, seconds * 1000, (caller, n) => lifecycle(queue, caller, n + 1_000_000_000));
    const nodeCpu = process.cpuUsage(cpu);
    const after = log.stats();
    const transactions = after.transactions - before.transactions;
    const brokerCpu = broker === null ? null : brokerCpuSeconds()! - broker;
    const share = (s: number): string => `${Math.round((100 * s) / rate.seconds)}%`;
    return [
      `${partitions} partition${partitions === 1 ? ' ' : 's'}: ${Math.round(rate.perSecond)} lifecycles/s`,
      `${Math.round(transactions / rate.seconds)} transactions/s of ${((after.records - before.records) / Math.max(1, transactions)).toFixed(1)} records`,
      `node CPU ${share((nodeCpu.user + nodeCpu.system) / 1e6)}`,
      ...(brokerCpu === null ? [] : [`broker CPU ${share(brokerCpu)}`]),
      `load ${os
        .loadavg()
        .map((n) => n.toFixed(2))
        .join(' ')}`,
    ].join(', ');
  } finally {
    await queue.stop();
    await site.remove();
  }
}

for (let round = 1; round <= rounds; round++) {
  for (const partitions of counts) console.log(`round ${round}: ${await window(partitions)}`);
}
