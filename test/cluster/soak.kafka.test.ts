/**
 * The cluster soak, short (bench/cluster-soak.ts runs the long one): three `runlog serve
 * --group` child processes sharing one topic of the real broker, two Worker processes connected through the
 * client, 2,000 entries over 1,000 threads submitted through the client with 5% of handler
 * runs failing (retried by the Workers), and a node SIGKILLed and started again three times
 * while the entries run. Then the events topic, read whole, the acknowledged tickets and the
 * handlers' own start/end records must show: no acknowledged submission lost, no two attempts
 * of one thread overlapping (by the events and by the handlers' clock), each thread's entries
 * started in submission order, every entry closed exactly once. The throughput is printed,
 * never asserted.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { MUST_BE_ZERO } from '../../bench/cluster/check.ts';
import { runClusterSoak } from '../../bench/cluster/soak.ts';
import { deleteTopic, kafkaBrokers, uniqueTopic } from '../log/kafka-test-support.ts';
import { onCleanup } from '../support/cleanup.ts';

const ENTRIES = 2_000;
const KILLS = 3;

it(
  'a soak with a node killed and restarted under load loses nothing, overlaps nothing, keeps order and closes each entry once',
  { timeout: 900_000 },
  async (t) => {
    const topic = uniqueTopic('runlog-soak');
    onCleanup(t, () => deleteTopic(topic));
    const report = await runClusterSoak({
      brokers: kafkaBrokers(),
      topic,
      partitions: 8,
      nodes: 3,
      group: `${topic}-group`,
      entries: ENTRIES,
      threads: 1_000,
      inFlight: 64,
      workerProcesses: 2,
      workersPerProcess: 2,
      concurrency: 16,
      leaseMs: 5_000,
      failureRate: 0.05,
      killEveryMs: 3_000,
      maxKills: KILLS,
      // Only a hang reaches this: the counts then say what was left undone.
      deadlineMs: 600_000,
      progress: (message) => t.diagnostic(message),
    });
    const { counts } = report;
    t.diagnostic(
      `throughput ${report.lifecyclesPerSecond.toFixed(0)} lifecycles/s, ${report.seconds.toFixed(1)} s; ${JSON.stringify(counts)}`,
    );
    const mustBeZero = Object.fromEntries(MUST_BE_ZERO.map((name) => [name, counts[name]]));
    assert.deepEqual(
      mustBeZero,
      Object.fromEntries(MUST_BE_ZERO.map((name) => [name, 0])),
      [...report.examples, ...report.workerErrors].join('\n'),
    );
    assert.equal(counts.acknowledged, ENTRIES, report.submit.refusals.join('\n'));
    assert.equal(counts.succeeded + counts.parked, ENTRIES);
    assert.equal(report.kills, KILLS);
    assert.ok(counts.handlerFailures > 0 && counts.retried > 0, 'some handler runs failed and were retried');
  },
);
