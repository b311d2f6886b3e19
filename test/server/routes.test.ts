/** Every route's happy path, over a real server with plain fetch. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import https from 'node:https';
import { openAuthenticator } from '../../src/server/auth.ts';
import { ROUTES } from '../../src/server/routes.ts';
import { startServer } from '../../src/server/start-server.ts';
import { onCleanup, scratchDir } from '../support/cleanup.ts';
import { RecordingLogger, serverOn, SUBMIT, TAKE } from './fixtures.ts';
import { selfSigned } from './self-signed.ts';

const text = (base64: string): string => Buffer.from(base64, 'base64').toString('utf8');

describe('server: every route', () => {
  it('submit, entry, take, extend, start-attempt, close, closed: the lifecycle over HTTP', async (t) => {
    const { call, clock } = await serverOn(t);
    const submitted = await call('POST', '/v1/submit', { body: { ...SUBMIT, metadata: { order: '17' }, priority: 3 } });
    assert.equal(submitted.status, 200);
    assert.equal(submitted.headers.get('content-type'), 'application/json; charset=utf-8');
    assert.equal(submitted.headers.get('runlog-now'), String(clock.nowMs));
    const { entryId, created } = submitted.body;
    assert.equal(created, true);
    const entryPath = `/v1/tenants/acme/entries/${entryId}`;

    const read = await call('GET', entryPath);
    assert.equal(read.status, 200);
    assert.deepEqual(
      [read.body.status, text(read.body.input), read.body.metadata, read.body.priority],
      ['open', 'hello', { order: '17' }, 3],
    );

    const taken = await call('POST', '/v1/take', { body: TAKE });
    assert.equal(taken.status, 200);
    const lease = taken.body.taken.lease;
    assert.deepEqual([lease.entryId, lease.holder, lease.epoch, lease.expiresAt], [entryId, 'w1', 1, clock.nowMs + 30_000]);
    assert.equal(taken.body.taken.entry.entryId, entryId);

    clock.advance(1_000);
    const extended = await call('POST', '/v1/leases/extend', { body: { lease, ttlMs: 60_000 } });
    assert.equal(extended.status, 200);
    assert.equal(extended.body.expiresAt, clock.nowMs + 60_000);
    assert.equal(extended.headers.get('runlog-now'), String(clock.nowMs));

    const attempt = await call('POST', '/v1/leases/start-attempt', { body: { lease: extended.body, runId: 'run-1' } });
    assert.equal(attempt.status, 200);
    assert.deepEqual(attempt.body, { runId: 'run-1', attempt: 1, epoch: 1, startedAt: clock.nowMs });

    const closed = await call('POST', '/v1/leases/close', {
      body: { lease: extended.body, request: { status: 'succeeded', result: 'AAEC' } },
    });
    assert.equal(closed.status, 200);
    assert.deepEqual([closed.body.status, closed.body.outcome, closed.body.result], ['closed', 'succeeded', 'AAEC']);

    const awaited = await call('GET', `${entryPath}/closed?waitMs=0`);
    assert.equal(awaited.status, 200);
    assert.equal(awaited.body.entry.outcome, 'succeeded');
  });

  it('a close may give its result as text, and a submit its input as base64', async (t) => {
    const { call } = await serverOn(t);
    const { body: ticket } = await call('POST', '/v1/submit', { body: { tenant: 'a', thread: 't', agent: 'billing', input: '/wA=' } });
    const { body: taken } = await call('POST', '/v1/take', { body: TAKE });
    assert.equal(taken.taken.entry.input, '/wA=');
    const closed = await call('POST', '/v1/leases/close', {
      body: { lease: taken.taken.lease, request: { status: 'failed', resultText: 'é', error: 'boom' } },
    });
    assert.deepEqual(
      [closed.body.entryId, closed.body.outcome, text(closed.body.result), closed.body.error],
      [ticket.entryId, 'failed', 'é', 'boom'],
    );
  });

  it('cancel, open entries of a thread, delete thread, prune', async (t) => {
    const { call, clock } = await serverOn(t);
    const first = (await call('POST', '/v1/submit', { body: SUBMIT })).body;
    const second = (await call('POST', '/v1/submit', { body: { ...SUBMIT, inputText: 'two' } })).body;
    const open = await call('GET', '/v1/tenants/acme/threads/order-1/entries');
    assert.equal(open.status, 200);
    assert.deepEqual(
      open.body.entries.map((entry: { entryId: string }) => entry.entryId),
      [first.entryId, second.entryId],
    );

    const cancelled = await call('POST', `/v1/tenants/acme/entries/${first.entryId}/cancel`, { body: { reason: 'not needed' } });
    assert.equal(cancelled.status, 200);
    assert.equal(cancelled.body.outcome, 'cancelled');

    const deleted = await call('DELETE', '/v1/tenants/acme/threads/order-1');
    assert.deepEqual([deleted.status, deleted.body], [200, { deleted: 1 }]);
    assert.deepEqual((await call('GET', '/v1/tenants/acme/threads/order-1/entries')).body, { entries: [] });

    clock.advance(10_000);
    const pruned = await call('POST', '/v1/prune', { body: { ticketLifetimeMs: 5_000, limit: 10 } });
    assert.deepEqual([pruned.status, pruned.body], [200, { pruned: 2 }]);
    assert.equal((await call('GET', `/v1/tenants/acme/entries/${first.entryId}`)).body.code, 'TicketExpired');
  });

  it('cancel takes an empty body (no reason)', async (t) => {
    const { call } = await serverOn(t);
    const { entryId } = (await call('POST', '/v1/submit', { body: SUBMIT })).body;
    const cancelled = await call('POST', `/v1/tenants/acme/entries/${entryId}/cancel`);
    assert.deepEqual([cancelled.status, cancelled.body.outcome], [200, 'cancelled']);
  });

  it('take-entry, yield (defer and retry), next-due', async (t) => {
    const { call, clock } = await serverOn(t);
    const { entryId } = (await call('POST', '/v1/submit', { body: { ...SUBMIT, notBefore: clock.nowMs + 5_000 } })).body;
    assert.deepEqual((await call('POST', '/v1/take', { body: TAKE })).body, { taken: null });
    assert.deepEqual((await call('POST', '/v1/next-due', { body: { agents: ['billing'] } })).body, { nextDueAt: clock.nowMs + 5_000 });
    assert.deepEqual((await call('POST', '/v1/next-due', { body: { agents: ['other'] } })).body, { nextDueAt: null });

    const taken = await call('POST', `/v1/tenants/acme/entries/${entryId}/take`, { body: { holder: 'w2', ttlMs: 10_000 } });
    assert.equal(taken.status, 200);
    assert.equal(taken.body.taken.lease.holder, 'w2');
    const deferred = await call('POST', '/v1/leases/yield', { body: { lease: taken.body.taken.lease, request: { kind: 'defer' } } });
    assert.deepEqual([deferred.status, deferred.body], [200, { yielded: true }]);

    const again = (await call('POST', `/v1/tenants/acme/entries/${entryId}/take`, { body: { holder: 'w2', ttlMs: 10_000 } })).body.taken;
    await call('POST', '/v1/leases/start-attempt', { body: { lease: again.lease, runId: 'r1' } });
    const retried = await call('POST', '/v1/leases/yield', {
      body: { lease: again.lease, request: { kind: 'retry', error: 'flaky', delayMs: 2_000 } },
    });
    assert.deepEqual(retried.body, { yielded: true });
    const stale = await call('POST', '/v1/leases/yield', { body: { lease: again.lease, request: { kind: 'defer' } } });
    assert.deepEqual(stale.body, { yielded: false });
    assert.deepEqual((await call('POST', '/v1/next-due', { body: { agents: ['billing'] } })).body, { nextDueAt: clock.nowMs + 2_000 });
  });

  it('metrics, health, now, healthz, readyz', async (t) => {
    const { call, clock } = await serverOn(t, { partitions: 3 });
    await call('POST', '/v1/submit', { body: SUBMIT });
    const metrics = await call('GET', '/v1/metrics');
    assert.equal(metrics.status, 200);
    assert.deepEqual([metrics.body.enqueued, metrics.body.open, metrics.body.warnings], [1, 1, {}]);
    const health = await call('GET', '/v1/health');
    assert.deepEqual(health.body, { partitions: [0, 1, 2].map((partition) => ({ partition, mode: 'serving' })) });
    assert.deepEqual((await call('GET', '/v1/now')).body, { now: clock.nowMs });
    assert.deepEqual((await call('GET', '/healthz')).body, { status: 'ok' });
    const ready = await call('GET', '/readyz');
    assert.deepEqual([ready.status, ready.body.ready, ready.body.partitions.length], [200, true, 3]);
  });

  it('cluster: a single server answers group null, owning every partition at its own URL', async (t) => {
    const { call, server } = await serverOn(t, { partitions: 3 });
    const self = { node: 'single', url: server.url };
    assert.deepEqual((await call('GET', '/v1/cluster')).body, {
      group: null,
      generation: 0,
      partitions: 3,
      self,
      members: [self],
      owners: [server.url, server.url, server.url],
    });
  });

  it('readyz answers 503 once a partition does not serve', async (t) => {
    const { call, queue } = await serverOn(t);
    await queue.stop();
    const ready = await call('GET', '/readyz');
    assert.equal(ready.status, 503);
    assert.deepEqual(ready.body, { ready: false, partitions: [0, 1].map((partition) => ({ partition, mode: 'stopped' })) });
    assert.deepEqual((await call('GET', '/healthz')).body, { status: 'ok' });
  });

  it('answers every route of the table (none is left without a test above)', () => {
    const tested = [
      'POST /v1/submit',
      'GET /v1/tenants/{tenant}/entries/{entryId}',
      'POST /v1/tenants/{tenant}/entries/{entryId}/cancel',
      'GET /v1/tenants/{tenant}/entries/{entryId}/closed',
      'GET /v1/tenants/{tenant}/threads/{thread}/entries',
      'DELETE /v1/tenants/{tenant}/threads/{thread}',
      'POST /v1/prune',
      'POST /v1/take',
      'POST /v1/tenants/{tenant}/entries/{entryId}/take',
      'POST /v1/leases/extend',
      'POST /v1/leases/start-attempt',
      'POST /v1/leases/yield',
      'POST /v1/leases/close',
      'POST /v1/next-due',
      'GET /v1/metrics',
      'GET /v1/cluster',
      'GET /v1/health',
      'GET /v1/now',
      'GET /healthz',
      'GET /readyz',
      'GET /v1/work', // long-poll.test.ts
      'GET /openapi.json', // openapi.test.ts
      'GET /v1/tenants/{tenant}/entries/{entryId}/history', // console-api.test.ts
      'GET /v1/agents', // console-api.test.ts
      'GET /console', // console-api.test.ts, console.browser.test.ts
      'GET /console/{file}', // console-api.test.ts, console.browser.test.ts
    ];
    // Routes others add (the event stream, Prometheus metrics) are tested in their own files; the batch routes in batches.test.ts.
    const others = new Set([
      'GET /v1/events',
      'GET /metrics',
      'POST /v1/submit-batch',
      'POST /v1/take-started',
      'POST /v1/leases/close-batch',
    ]);
    const routes = ROUTES.map((route) => `${route.method} ${route.path}`).filter((route) => !others.has(route));
    assert.deepEqual(routes.sort(), tested.sort());
  });
});

describe('server: HTTPS', () => {
  it('serves HTTPS when given a certificate and key', async (t) => {
    const { local } = await serverOn(t);
    const tls = selfSigned(await scratchDir(t, 'runlog-tls-'));
    const server = await startServer({
      queue: local,
      authenticator: openAuthenticator(),
      logger: new RecordingLogger(),
      host: '127.0.0.1',
      port: 0,
      tls: { cert: tls.cert, key: tls.key },
      maxInputBytes: 1024,
    });
    onCleanup(t, () => server.close());
    assert.match(server.url, /^https:\/\/127\.0\.0\.1:\d+$/);
    const body = await new Promise<string>((resolve, reject) => {
      const request = https.get(`${server.url}/v1/now`, { ca: tls.cert }, (response) => {
        let text = '';
        response.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
        response.on('end', () => resolve(text));
      });
      request.on('error', reject);
    });
    assert.deepEqual(JSON.parse(body), { now: local.now() });
  });
});
