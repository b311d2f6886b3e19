/**
 * The Prometheus registry against a real queue (memory log, fake store clock): after
 * submits, takes, attempts, closes, a retry, a cancel, a prune and a warning, a scrape says
 * exactly what queue.metrics() and health() say, and the HTTP requests recorded.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { openMemoryLog } from '../../src/log/memory/memory-log.ts';
import { openRunQueueOnLog } from '../../src/queue/open-run-queue.ts';
import type { RunQueue } from '../../src/queue/run-queue.ts';
import { PROMETHEUS_CONTENT_TYPE, PrometheusMetrics } from '../../src/server/prometheus.ts';
import { FakeClock, submitOf } from '../contract/fixtures.ts';
import { onCleanup } from '../support/cleanup.ts';
import { parsePrometheus, sampleOf } from './prometheus-text.ts';

const TTL = 60_000;

async function busyQueue(t: Parameters<typeof onCleanup>[0]): Promise<{ queue: RunQueue; clock: FakeClock }> {
  const clock = new FakeClock();
  const queue = await openRunQueueOnLog(await openMemoryLog({ partitions: 2 }), { clock: clock.read, onWarning: () => {} });
  onCleanup(t, () => queue.stop());
  const unlisten = queue.onWork(() => {
    throw new Error('a listener that throws: one RUNLOG_LISTENER warning per wake');
  });
  await queue.submit(submitOf('acme', 'a'));
  unlisten();
  await queue.submit(submitOf('acme', 'b'));
  await queue.submit(submitOf('globex', 'c'));
  const doomed = await queue.submit(submitOf('acme', 'd', { deadline: clock.nowMs + 10 }));
  const cancelled = await queue.submit(submitOf('globex', 'e', { agent: 'deploy' }));
  clock.advance(250);
  for (const [status, execMs] of [
    ['succeeded', 1_500],
    ['failed', 400],
  ] as const) {
    const taken = (await queue.take({ agents: ['build'], holder: 'w', ttlMs: TTL }))!;
    await queue.startAttempt(taken.lease, `run-${status}`);
    clock.advance(execMs);
    await queue.close(taken.lease, { status });
  }
  const retried = (await queue.take({ agents: ['build'], holder: 'w', ttlMs: TTL }))!;
  await queue.startAttempt(retried.lease, 'run-retried');
  clock.advance(30);
  await queue.yield(retried.lease, { kind: 'retry', error: 'boom', delayMs: 1_000 });
  await queue.cancel('globex', cancelled.entryId);
  assert.equal(await queue.expireOverdue(), 1);
  assert.equal((await queue.entry('acme', doomed.entryId)).outcome, 'expired');
  assert.equal(await queue.prune(0, 1), 1);
  return { queue, clock };
}

describe('Prometheus metrics', () => {
  it('a scrape says what queue.metrics() and health() say, under runlog_ names with HELP and TYPE', async (t) => {
    const { queue } = await busyQueue(t);
    const prometheus = new PrometheusMetrics(queue);
    const samples = parsePrometheus(await prometheus.scrape());
    const metrics = await queue.metrics();
    const expected: [string, number][] = [
      ['runlog_entries_enqueued_total', metrics.enqueued],
      ['runlog_attempts_processed_total', metrics.processed],
      ['runlog_entries_succeeded_total', metrics.succeeded],
      ['runlog_entries_failed_total', metrics.failed],
      ['runlog_attempts_retried_total', metrics.retried],
      ['runlog_entries_expired_total', metrics.expired],
      ['runlog_entries_cancelled_total', metrics.cancelled],
      ['runlog_entries_dropped_total', metrics.dropped],
      ['runlog_entries_open', metrics.open],
      ['runlog_wait_seconds_total', metrics.totalWaitMs / 1000],
      ['runlog_wait_max_seconds', metrics.maxWaitMs / 1000],
      ['runlog_exec_seconds_total', metrics.totalExecMs / 1000],
      ['runlog_exec_max_seconds', metrics.maxExecMs / 1000],
    ];
    for (const [name, value] of expected) assert.equal(sampleOf(samples, name), value, name);
    // The queue's own figures, so a scrape that read zeros everywhere could not pass.
    assert.deepEqual(
      [metrics.enqueued, metrics.succeeded, metrics.failed, metrics.retried, metrics.expired, metrics.cancelled, metrics.dropped],
      [5, 1, 1, 1, 1, 1, 1],
    );
    assert.deepEqual([metrics.open, metrics.processed, metrics.maxWaitMs, metrics.maxExecMs], [1, 3, 2_150, 1_500]);
    assert.equal(sampleOf(samples, 'runlog_warnings_total', { code: 'RUNLOG_LISTENER' }), metrics.warnings.RUNLOG_LISTENER);
    assert.equal(metrics.warnings.RUNLOG_LISTENER, 1);
    for (const partition of ['0', '1']) {
      assert.equal(sampleOf(samples, 'runlog_partition_mode', { partition, mode: 'serving' }), 1);
      assert.equal(sampleOf(samples, 'runlog_partition_mode', { partition, mode: 'down' }), 0);
    }
    for (const sample of samples.values) assert.match(sample.name, /^runlog_/);
    for (const name of new Set(samples.values.map((s) => s.family))) {
      assert.ok(samples.help.get(name), `${name} has HELP text`);
      assert.ok(samples.type.get(name), `${name} has a TYPE`);
    }
    assert.equal(samples.type.get('runlog_entries_enqueued_total'), 'counter');
    assert.equal(samples.type.get('runlog_entries_open'), 'gauge');
    assert.equal(PROMETHEUS_CONTENT_TYPE, 'text/plain; version=0.0.4; charset=utf-8');
  });

  it('each scrape reads the queue anew: later work and a stopped queue show in the next one', async (t) => {
    const { queue } = await busyQueue(t);
    const prometheus = new PrometheusMetrics(queue);
    const before = sampleOf(parsePrometheus(await prometheus.scrape()), 'runlog_entries_enqueued_total');
    await queue.submit(submitOf('initech', 'z'));
    const [first, second] = await Promise.all([prometheus.scrape(), prometheus.scrape()]);
    assert.equal(sampleOf(parsePrometheus(first), 'runlog_entries_enqueued_total'), before + 1);
    assert.equal(second, first, 'two scrapes at once, nothing between them: the same text');
    await queue.stop();
    const stopped = parsePrometheus(await prometheus.scrape());
    assert.equal(sampleOf(stopped, 'runlog_partition_mode', { partition: '0', mode: 'stopped' }), 1);
    assert.equal(sampleOf(stopped, 'runlog_partition_mode', { partition: '0', mode: 'serving' }), 0);
  });

  it('recorded HTTP requests are counted and timed by route pattern, method and status', async (t) => {
    const { queue } = await busyQueue(t);
    const prometheus = new PrometheusMetrics(queue);
    const route = '/v1/tenants/{tenant}/entries/{entryId}';
    prometheus.recordRequest({ route, method: 'GET', status: 200, seconds: 0.003 });
    prometheus.recordRequest({ route, method: 'GET', status: 200, seconds: 0.2 });
    prometheus.recordRequest({ route, method: 'GET', status: 404, seconds: 0.001 });
    prometheus.recordRequest({ route: 'unmatched', method: 'BREW', status: 404, seconds: 0.001 });
    const samples = parsePrometheus(await prometheus.scrape());
    const ok = { route, method: 'GET', status: '200' };
    assert.equal(sampleOf(samples, 'runlog_http_requests_total', ok), 2);
    assert.equal(sampleOf(samples, 'runlog_http_requests_total', { ...ok, status: '404' }), 1);
    assert.equal(sampleOf(samples, 'runlog_http_requests_total', { route: 'unmatched', method: 'OTHER', status: '404' }), 1);
    assert.equal(sampleOf(samples, 'runlog_http_request_duration_seconds_count', ok), 2);
    assert.ok(Math.abs(sampleOf(samples, 'runlog_http_request_duration_seconds_sum', ok) - 0.203) < 1e-9);
    assert.equal(sampleOf(samples, 'runlog_http_request_duration_seconds_bucket', { ...ok, le: '0.005' }), 1);
    assert.equal(sampleOf(samples, 'runlog_http_request_duration_seconds_bucket', { ...ok, le: '0.25' }), 2);
    assert.equal(samples.type.get('runlog_http_request_duration_seconds'), 'histogram');
  });
});
