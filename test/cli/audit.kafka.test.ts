/**
 * The audit commands against the real Kafka broker: a queue in this process writes
 * audit-scenario.ts's history to a fresh topic and stays its writer; history, find and
 * state --at answer what it did (audit-checks.ts), and the writer goes on unfenced.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { openRunQueue } from '../../src/queue/open-run-queue.ts';
import { deleteTopic, kafkaBrokers, uniqueTopic } from '../log/kafka-test-support.ts';
import { writeScenario } from './audit-scenario.ts';
import { checkFind, checkHistory, checkState } from './audit-checks.ts';

describe('runlog audit commands on Kafka', () => {
  it('history, find and state --at answer what a live queue wrote, and fence no writer', async (t) => {
    const topic = uniqueTopic('runlog-audit');
    const queue = await openRunQueue({ log: { kind: 'kafka', brokers: kafkaBrokers(), topic }, partitions: 2 });
    t.after(async () => {
      await queue.stop();
      await deleteTopic(topic);
    });
    const scenario = await writeScenario(queue);
    const at = ['--brokers', kafkaBrokers().join(','), '--topic', topic];
    await checkHistory(at, scenario);
    await checkFind(at, scenario);
    await checkState(at, scenario);
    await queue.submit({ tenant: 'acme', thread: 'after-audit', agent: 'mail', input: 'still the writer' });
    assert.equal((await queue.metrics()).enqueued, 5);
  });
});
