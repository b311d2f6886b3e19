/**
 * The cluster soak (not part of npm test; its short version is test/cluster/soak.kafka.test.ts):
 * runlog serve nodes on one Kafka topic, Workers in child processes connected through the
 * client, thousands of entries over 1,000 threads with 5% of handler runs failing, and a node
 * SIGKILLed and started again every few seconds. Then it reads the events topic and prints:
 * acknowledged submissions lost, overlapping attempts of one thread (from the events and from
 * the handlers' own start/end times), per-thread order broken, entries not closed or closed
 * twice (all must be 0), and the throughput. Exit code 1 if a count that must be 0 is not.
 *
 *   node --import tsx bench/cluster-soak.ts [--nodes 3] [--entries 5000] [--threads 1000]
 *     [--kill-every-ms 5000] [--partitions 8] [--worker-processes 2] [--deadline-s 900]
 *
 * More than one node runs in cluster mode (`runlog serve --group`). The broker: KAFKA_BROKERS,
 * or one started for the run from test/broker (RUNLOG_BROKER_PORT=0: on free ports).
 */
import os from 'node:os';
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { MUST_BE_ZERO } from './cluster/check.ts';
import { runClusterSoak } from './cluster/soak.ts';

const { values } = parseArgs({
  options: {
    nodes: { type: 'string', default: '3' },
    entries: { type: 'string', default: '5000' },
    threads: { type: 'string', default: '1000' },
    'kill-every-ms': { type: 'string', default: '5000' },
    partitions: { type: 'string', default: '8' },
    'worker-processes': { type: 'string', default: '2' },
    'deadline-s': { type: 'string', default: '900' },
    'failure-rate': { type: 'string', default: '0.05' },
  },
});

function count(name: keyof typeof values, min: number): number {
  const value = Number(values[name]);
  if (!Number.isFinite(value) || value < min) throw new Error(`--${name} must be a number >= ${min}, got ${values[name]}`);
  return value;
}

async function withBroker<T>(body: (brokers: string[]) => Promise<T>): Promise<T> {
  if (process.env.KAFKA_BROKERS) return body(process.env.KAFKA_BROKERS.split(','));
  // @ts-expect-error -- test/broker/broker.mjs is plain JavaScript without types
  const { startBroker } = (await import('../test/broker/broker.mjs')) as {
    startBroker(): Promise<{ brokers: string; stop(): Promise<void> }>;
  };
  process.stderr.write('[soak] starting a broker (test/broker)\n');
  const broker = await startBroker();
  try {
    return await body(broker.brokers.split(','));
  } finally {
    await broker.stop();
  }
}

const nodes = count('nodes', 1);
const id = randomUUID().slice(0, 8);
const report = await withBroker((brokers) =>
  runClusterSoak({
    brokers,
    topic: `runlog-soak-${id}`,
    partitions: count('partitions', 1),
    nodes,
    ...(nodes > 1 ? { group: `runlog-soak-${id}` } : {}),
    entries: count('entries', 1),
    threads: count('threads', 1),
    inFlight: 64,
    workerProcesses: count('worker-processes', 1),
    workersPerProcess: 2,
    concurrency: 16,
    leaseMs: 5_000,
    failureRate: count('failure-rate', 0),
    killEveryMs: count('kill-every-ms', 0),
    deadlineMs: count('deadline-s', 1) * 1000,
    progress: (message) => process.stderr.write(`[soak] ${message}\n`),
  }),
);

const { counts } = report;
const load = os
  .loadavg()
  .map((n) => n.toFixed(2))
  .join(' ');
console.log(`\nrunlog cluster soak — ${nodes} node(s), ${values.partitions} partitions, ${os.cpus().length} cores, load ${load}`);
console.log(`entries acknowledged ${counts.acknowledged} of ${values.entries} over ${values.threads} threads; node kills ${report.kills}`);
console.log(
  `attempts ${counts.attempts}, handler runs ${counts.handlerRuns} (${counts.handlerFailures} failed on purpose), retried ${counts.retried}, lease expiries ${counts.leaseExpiries}`,
);
console.log(`closed: succeeded ${counts.succeeded}, parked ${counts.parked}`);
for (const name of MUST_BE_ZERO) console.log(`  ${name.padEnd(20)} ${String(counts[name]).padStart(6)}  (must be 0)`);
console.log(
  `throughput: ${report.lifecyclesPerSecond.toFixed(0)} lifecycles/s (store clock, first submit to last close), ${report.seconds.toFixed(1)} s wall`,
);
console.log(`submissions retried ${report.submit.retries}, unacknowledged ${report.submit.unacknowledged}`);
if (report.unservedMs.length > 0) {
  const sorted = [...report.unservedMs].sort((a, b) => a - b);
  console.log(
    `partitions unserved after a move: p50 ${sorted[Math.floor(sorted.length / 2)]} ms, max ${sorted.at(-1)} ms (${sorted.length} moves)`,
  );
}
console.log(`submissions sent again, by the error of the try before: ${JSON.stringify(report.submit.retriedAfter)}`);
if (report.examples.length > 0) console.log(`faults (first few):\n  ${report.examples.join('\n  ')}`);
console.log(`workers: ${JSON.stringify(report.workers)}`);
if (report.workerErrors.length > 0) console.log(`worker errors (first few):\n  ${report.workerErrors.join('\n  ')}`);
if (report.submit.refusals.length > 0) console.log(`submit refusals:\n  ${report.submit.refusals.join('\n  ')}`);
process.exit(MUST_BE_ZERO.some((name) => counts[name] !== 0) ? 1 : 0);
