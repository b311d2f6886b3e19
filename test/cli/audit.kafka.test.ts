/**
 * The audit commands against the real Kafka broker: a queue in this process writes
 * audit-scenario.ts's history to a fresh topic and stays its writer; history, find and
 * state --at answer what it did (audit-checks.ts), and the writer goes on unfenced. verify
 * compares a live runlog serve's topic with its answers, then with the snapshots its stop took.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { connect } from '../../src/client/index.ts';
import { spawnServe } from '../server/serve-child.ts';
import { openRunQueue } from '../../src/queue/open-run-queue.ts';
import { deleteTopic, kafkaBrokers, uniqueTopic } from '../log/kafka-test-support.ts';
import { writeScenario } from './audit-scenario.ts';
import { checkFind, checkHistory, checkState, checkTail } from './audit-checks.ts';
import { runCli } from './run-cli.ts';

describe('runlog audit commands on Kafka', () => {
  it('history, find, state --at and tail (filtered) answer what a live queue wrote, and fence no writer', async (t) => {
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
    await checkTail(at, scenario);
    const verified = await runCli(['verify', ...at]);
    assert.equal(verified.code, 0, verified.stdout + verified.stderr);
    assert.match(verified.stdout, /^partition 1: \d+ records, \d+ entries replayed: whole$/m);
    await queue.submit({ tenant: 'acme', thread: 'after-audit', agent: 'mail', input: 'still the writer' });
    assert.equal((await queue.metrics()).enqueued, 5);
  });
});

describe('runlog verify on Kafka', () => {
  it('the replay of a topic a live runlog serve writes equals what the server answers, and its snapshots once it stopped', async (t) => {
    const topic = uniqueTopic('runlog-verify');
    t.after(() => deleteTopic(topic));
    const brokers = kafkaBrokers().join(',');
    const serve = spawnServe(t, ['--brokers', brokers, '--topic', topic, '--partitions', '2', '--port', '0', '--host', '127.0.0.1']);
    const { url } = await serve.started();
    const client = await connect({ url });
    t.after(() => client.stop());
    await writeScenario(client);
    const run = await runCli(['verify', '--brokers', brokers, '--topic', topic, '--url', url]);
    assert.equal(run.code, 0, run.stdout + run.stderr);
    assert.match(run.stdout, new RegExp(`^compared 4 entries with the server at ${url}: all equal$`, 'm'));
    serve.child.kill('SIGTERM');
    await serve.exited;

    // The server's clean stop snapshotted its partitions into <topic>.snapshots: each equals the replay up to it.
    const after = await runCli(['verify', '--brokers', brokers, '--topic', topic, '--json']);
    assert.equal(after.code, 0, after.stdout + after.stderr);
    const report = JSON.parse(after.stdout) as { partitions: { snapshots: { name: string; verdict: string }[] }[] };
    const verdicts = report.partitions.flatMap((p) => p.snapshots);
    assert.ok(verdicts.length > 0, 'the stopped server left snapshots');
    assert.deepEqual(
      verdicts.map((v) => v.verdict),
      verdicts.map(() => 'equal'),
    );
  });
});
