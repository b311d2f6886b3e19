/** The command line against the real Kafka broker: it creates no topic and fences no writer. */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import kafkajs from 'kafkajs';
import { openRunQueue } from '../../src/queue/open-run-queue.ts';
import { deleteTopic, kafkaBrokers, uniqueTopic } from '../log/kafka-test-support.ts';
import { runCli } from './run-cli.ts';

const CLI = join(import.meta.dirname, '../../src/cli/runlog.ts');

/** Runs the CLI without blocking this process's event loop (the queue under test lives here). */
async function runlog(...args: string[]): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', CLI, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const [status] = await once(child, 'exit');
  return { status: status as number | null, stdout, stderr };
}

async function topicExists(topic: string): Promise<boolean> {
  const admin = new kafkajs.Kafka({ clientId: 'runlog-test', brokers: kafkaBrokers(), logLevel: kafkajs.logLevel.NOTHING }).admin();
  await admin.connect();
  try {
    return (await admin.listTopics()).includes(topic);
  } finally {
    await admin.disconnect();
  }
}

describe('runlog command line on Kafka', () => {
  it('a topic that does not exist: an error exit (2) from every reading command, and no topic is created', async () => {
    const typo = uniqueTopic('runlog-cli-typo');
    const run = await runlog('replay', '--brokers', kafkaBrokers().join(','), '--topic', typo);
    assert.equal(run.status, 2, run.stdout);
    assert.match(run.stderr, new RegExp(`InvalidArgument: .*${typo} does not exist`));
    const at = ['--brokers', kafkaBrokers().join(','), '--topic', typo];
    for (const args of [
      ['history', 'acme', '0-1', ...at],
      ['find', ...at],
      ['state', '--at', '0', ...at],
      ['tail', '--limit', '1', ...at],
      ['export', ...at],
      ['verify', ...at],
    ]) {
      const other = await runCli(args);
      assert.equal(other.code, 2, `${args[0]}: ${other.stdout}`);
      assert.match(other.stderr, new RegExp(`InvalidArgument: .*${typo} does not exist`), args[0]);
    }
    assert.equal(await topicExists(typo), false);
  });

  it('reads a topic a live queue writes, and fences no writer', async (t) => {
    const topic = uniqueTopic('runlog-cli');
    const queue = await openRunQueue({ log: { kind: 'kafka', brokers: kafkaBrokers(), topic }, partitions: 1 });
    t.after(async () => {
      await queue.stop();
      await deleteTopic(topic);
    });
    const ticket = await queue.submit({ tenant: 'acme', thread: 'order-1', agent: 'billing', input: 'charge' });
    const replay = await runlog('replay', '--brokers', kafkaBrokers().join(','), '--topic', topic);
    assert.equal(replay.status, 0, replay.stderr);
    assert.match(replay.stdout, /1 entries \(1 open\)/);
    const history = await runlog('history', 'acme', ticket.entryId, '--brokers', kafkaBrokers().join(','), '--topic', topic);
    assert.match(history.stdout, /Submitted .*input="charge"/);
    await queue.submit({ tenant: 'acme', thread: 'order-2', agent: 'billing', input: 'still the writer' });
    assert.equal((await queue.metrics()).enqueued, 2);
  });

  it('tail follows a topic a live queue writes (every partition), and export reads it', async (t) => {
    const topic = uniqueTopic('runlog-cli-tail');
    const queue = await openRunQueue({ log: { kind: 'kafka', brokers: kafkaBrokers(), topic }, partitions: 2 });
    t.after(async () => {
      await queue.stop();
      await deleteTopic(topic);
    });
    for (let i = 0; i < 4; i++) await queue.submit({ tenant: 'acme', thread: `order-${i}`, agent: 'billing', input: `job ${i}` });
    const at = ['--brokers', kafkaBrokers().join(','), '--topic', topic];
    const exported = await runlog('export', ...at);
    assert.equal(exported.status, 0, exported.stderr);
    assert.equal(exported.stdout.match(/"type":"Submitted"/g)?.length, 4);
    const tail = spawn(process.execPath, ['--import', 'tsx', CLI, 'tail', ...at, '--from', 'start', '--json', '--tenant', 'acme'], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    t.after(() => tail.kill());
    const lines = createInterface({ input: tail.stdout })[Symbol.asyncIterator]();
    const inputs: string[] = [];
    const readOne = async (): Promise<void> => {
      const event = JSON.parse((await lines.next()).value as string) as { type: string; input?: string };
      if (event.type === 'Submitted') inputs.push(Buffer.from(event.input!, 'base64').toString());
    };
    for (let i = 0; i < 4; i++) await readOne(); // the four submissions (the filter drops the ticket keys)
    await queue.submit({ tenant: 'acme', thread: 'order-9', agent: 'billing', input: 'appended while tailing' });
    await readOne();
    assert.deepEqual(inputs.sort(), ['appended while tailing', 'job 0', 'job 1', 'job 2', 'job 3']);
    tail.kill('SIGINT');
    assert.deepEqual(await once(tail, 'exit'), [0, null]);
  });
});
