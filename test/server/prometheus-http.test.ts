/**
 * GET /metrics on a real server (loopback, a free port) with tokens configured: no token
 * needed, Prometheus text 0.0.4, and after submits, takes, attempts and closes over HTTP the
 * queue's figures are what queue.metrics() says, and each request is counted by its route
 * pattern and status.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { openAuthenticator } from '../../src/server/auth.ts';
import { SUBMIT, TAKE, serverOn } from './fixtures.ts';
import { parsePrometheus, sampleOf } from './prometheus-text.ts';

const TOKEN = 'a-worker-and-producer-token-1234';

describe('GET /metrics', () => {
  it("needs no token, answers Prometheus text, and matches the queue's metrics after work over HTTP", async (t) => {
    const authenticator = openAuthenticator([{ name: 'both', token: TOKEN, tenants: '*', roles: ['producer', 'worker'] }]);
    const { call, server, local, clock } = await serverOn(t, { authenticator });
    for (let i = 0; i < 3; i++)
      assert.equal((await call('POST', '/v1/submit', { body: { ...SUBMIT, thread: `t${i}` }, token: TOKEN })).status, 200);
    clock.advance(120);
    for (let i = 0; i < 2; i++) {
      const { lease } = (await call('POST', '/v1/take', { body: TAKE, token: TOKEN })).body.taken;
      await call('POST', '/v1/leases/start-attempt', { body: { lease, runId: `run-${i}` }, token: TOKEN });
      clock.advance(40);
      const status = i === 0 ? 'succeeded' : 'failed';
      assert.equal((await call('POST', '/v1/leases/close', { body: { lease, request: { status } }, token: TOKEN })).status, 200);
    }
    assert.equal((await call('GET', '/v1/no-such-route')).status, 404);

    const response = await fetch(`${server.url}/metrics`);
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('content-type'), 'text/plain; version=0.0.4; charset=utf-8');
    const samples = parsePrometheus(await response.text());
    const metrics = await local.metrics();
    assert.deepEqual([metrics.enqueued, metrics.succeeded, metrics.failed, metrics.open, metrics.maxWaitMs], [3, 1, 1, 1, 160]);
    assert.equal(sampleOf(samples, 'runlog_entries_enqueued_total'), metrics.enqueued);
    assert.equal(sampleOf(samples, 'runlog_entries_succeeded_total'), metrics.succeeded);
    assert.equal(sampleOf(samples, 'runlog_entries_failed_total'), metrics.failed);
    assert.equal(sampleOf(samples, 'runlog_attempts_processed_total'), metrics.processed);
    assert.equal(sampleOf(samples, 'runlog_entries_open'), metrics.open);
    assert.equal(sampleOf(samples, 'runlog_wait_seconds_total'), metrics.totalWaitMs / 1000);
    assert.equal(sampleOf(samples, 'runlog_exec_max_seconds'), metrics.maxExecMs / 1000);
    assert.equal(sampleOf(samples, 'runlog_partition_mode', { partition: '1', mode: 'serving' }), 1);
    const requests = (route: string, method: string, status: string) =>
      sampleOf(samples, 'runlog_http_requests_total', { route, method, status });
    assert.equal(requests('/v1/submit', 'POST', '200'), 3);
    assert.equal(requests('/v1/take', 'POST', '200'), 2);
    assert.equal(requests('/v1/leases/close', 'POST', '200'), 2);
    assert.equal(requests('unmatched', 'GET', '404'), 1);
    assert.equal(
      sampleOf(samples, 'runlog_http_request_duration_seconds_count', { route: '/v1/submit', method: 'POST', status: '200' }),
      3,
    );

    // The scrape itself is counted in the next one.
    const again = parsePrometheus(await (await fetch(`${server.url}/metrics`)).text());
    assert.equal(sampleOf(again, 'runlog_http_requests_total', { route: '/metrics', method: 'GET', status: '200' }), 1);
  });

  it('a request with a token still needs none: /metrics is public, and only GET', async (t) => {
    const authenticator = openAuthenticator([{ name: 'p', token: TOKEN, tenants: '*', roles: ['producer'] }]);
    const { call, server } = await serverOn(t, { authenticator });
    const scrape = await fetch(`${server.url}/metrics`, { headers: { authorization: 'Bearer not-a-configured-token-at-all' } });
    assert.equal(scrape.status, 200);
    assert.match(await scrape.text(), /^# HELP runlog_/m);
    assert.equal((await call('POST', '/metrics', { body: {} })).status, 405);
  });
});
