/**
 * `runlog serve` on the real Kafka broker, configured by the environment alone
 * (RUNLOG_KAFKA_BROKERS, RUNLOG_TOPIC, RUNLOG_PARTITIONS): it creates the topic, serves a
 * submit, take and close over HTTP, stops on SIGTERM with exit code 0, and the topic, read
 * by a queue opened after it, holds what it acknowledged.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { openRunQueue } from '../../src/queue/open-run-queue.ts';
import { onCleanup } from '../support/cleanup.ts';
import { deleteTopic, kafkaBrokers, uniqueTopic } from '../log/kafka-test-support.ts';
import { spawnServe } from './serve-child.ts';

async function post(url: string, path: string, body: unknown): Promise<Record<string, unknown>> {
  const response = await fetch(`${url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const answer = (await response.json()) as Record<string, unknown>;
  assert.equal(response.status, 200, JSON.stringify(answer));
  return answer;
}

describe('runlog serve on Kafka', () => {
  it('serves a topic named by the environment, and stops cleanly on SIGTERM', async (t) => {
    const topic = uniqueTopic('runlog-serve');
    onCleanup(t, () => deleteTopic(topic));
    const env = { RUNLOG_KAFKA_BROKERS: kafkaBrokers().join(','), RUNLOG_TOPIC: topic, RUNLOG_PARTITIONS: '2', RUNLOG_HOST: '127.0.0.1' };
    const serve = spawnServe(t, ['--port', '0'], env);
    const { url } = await serve.started();
    const listening = serve.records.find((record) => record.event === 'serve.listening')!;
    assert.deepEqual([listening.log, listening.topic, listening.partitions], ['kafka', topic, 2]);

    const ticket = await post(url, '/v1/submit', { tenant: 'acme', thread: 'order-1', agent: 'billing', inputText: 'charge' });
    const { taken } = (await post(url, '/v1/take', { agents: ['billing'], holder: 'w', ttlMs: 30_000 })) as { taken: { lease: unknown } };
    await post(url, '/v1/leases/close', { lease: taken.lease, request: { status: 'succeeded', resultText: 'done' } });
    serve.child.kill('SIGTERM');
    assert.deepEqual(await serve.exited, { code: 0, signal: null }, serve.stderr());

    const queue = await openRunQueue({ log: { kind: 'kafka', brokers: kafkaBrokers(), topic } });
    onCleanup(t, () => queue.stop());
    const entry = await queue.entry('acme', String(ticket.entryId));
    assert.deepEqual([entry.outcome, Buffer.from(entry.result!).toString()], ['succeeded', 'done']);
  });
});
