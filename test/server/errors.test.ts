/**
 * Every refusal the API can be driven to, over HTTP: its status, problem body and headers,
 * and nothing written. Codes no request can provoke (Parked: the worker's; Fenced, Locked,
 * Corrupt, NotOwner: a log's) are held to the table in test/wire/problem.test.ts.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RunlogError } from '../../src/errors.ts';
import { openMemoryLog } from '../../src/log/memory/memory-log.ts';
import { openAuthenticator } from '../../src/server/auth.ts';
import { startServer } from '../../src/server/start-server.ts';
import { onCleanup } from '../support/cleanup.ts';
import { wrapLog } from '../support/wrap-log.ts';
import { logSize } from '../contract/fixtures.ts';
import { assertProblem, caller, RecordingLogger, serverOn, SUBMIT, TAKE, type Answer, type ServerFixture, wrapQueue } from './fixtures.ts';

/** Calls `request` and checks it was refused with status and code, and that nothing was written. */
async function refusedOver(
  fixture: ServerFixture,
  request: () => Promise<Answer>,
  status: number,
  code: string,
  message: RegExp,
): Promise<Answer> {
  const before = await logSize(fixture.log);
  const answer = await request();
  assertProblem(answer, status, code, message);
  assert.equal(await logSize(fixture.log), before, `a refused ${code} wrote to the log`);
  return answer;
}

describe('server: each refusal over HTTP', () => {
  it('TicketNotFound: 404', async (t) => {
    const fixture = await serverOn(t);
    await refusedOver(
      fixture,
      () => fixture.call('GET', '/v1/tenants/acme/entries/0-madeup'),
      404,
      'TicketNotFound',
      /ticket "0-madeup" was never issued/,
    );
  });

  it('TicketExpired: 410', async (t) => {
    const fixture = await serverOn(t);
    const { entryId } = await fixture.queue.submit({ tenant: 'acme', thread: 't', agent: 'billing', input: 'x' });
    await fixture.queue.cancel('acme', entryId);
    await fixture.queue.prune(0, 10);
    await refusedOver(fixture, () => fixture.call('GET', `/v1/tenants/acme/entries/${entryId}`), 410, 'TicketExpired', /has expired/);
  });

  it('ThreadBusy: 409, retriable', async (t) => {
    const fixture = await serverOn(t);
    await fixture.call('POST', '/v1/submit', { body: SUBMIT });
    const answer = await refusedOver(
      fixture,
      () => fixture.call('POST', '/v1/submit', { body: { ...SUBMIT, strategy: 'reject' } }),
      409,
      'ThreadBusy',
      /./,
    );
    assert.equal(answer.body.retriable, true);
  });

  it('SubmissionKeyReused: 409', async (t) => {
    const fixture = await serverOn(t);
    await fixture.call('POST', '/v1/submit', { body: { ...SUBMIT, key: 'k1' } });
    await refusedOver(
      fixture,
      () => fixture.call('POST', '/v1/submit', { body: { ...SUBMIT, key: 'k1', inputText: 'other' } }),
      409,
      'SubmissionKeyReused',
      /k1/,
    );
  });

  it('EntryClosed: 409', async (t) => {
    const fixture = await serverOn(t);
    const { entryId } = (await fixture.call('POST', '/v1/submit', { body: SUBMIT })).body;
    await fixture.call('POST', `/v1/tenants/acme/entries/${entryId}/cancel`);
    await refusedOver(
      fixture,
      () => fixture.call('POST', `/v1/tenants/acme/entries/${entryId}/cancel`),
      409,
      'EntryClosed',
      /is closed \(cancelled\)/,
    );
  });

  it('LeaseNotCurrent: 409', async (t) => {
    const fixture = await serverOn(t);
    await fixture.call('POST', '/v1/submit', { body: SUBMIT });
    const { lease } = (await fixture.call('POST', '/v1/take', { body: TAKE })).body.taken;
    const stale = { ...lease, epoch: lease.epoch + 1 };
    await refusedOver(
      fixture,
      () => fixture.call('POST', '/v1/leases/extend', { body: { lease: stale, ttlMs: 1000 } }),
      409,
      'LeaseNotCurrent',
      /epoch 2 .* is not current/,
    );
  });

  it('RunIdReused: 409', async (t) => {
    const fixture = await serverOn(t);
    await fixture.call('POST', '/v1/submit', { body: SUBMIT });
    await fixture.call('POST', '/v1/submit', { body: { ...SUBMIT, inputText: 'second' } });
    const first = (await fixture.call('POST', '/v1/take', { body: TAKE })).body.taken.lease;
    await fixture.call('POST', '/v1/leases/start-attempt', { body: { lease: first, runId: 'run-1' } });
    await fixture.call('POST', '/v1/leases/close', { body: { lease: first, request: { status: 'succeeded' } } });
    const second = (await fixture.call('POST', '/v1/take', { body: TAKE })).body.taken.lease;
    await refusedOver(
      fixture,
      () => fixture.call('POST', '/v1/leases/start-attempt', { body: { lease: second, runId: 'run-1' } }),
      409,
      'RunIdReused',
      /"run-1"/,
    );
  });

  it('QueueFull: 429 with retry-after', async (t) => {
    const fixture = await serverOn(t, { capacity: { total: 1 } });
    await fixture.call('POST', '/v1/submit', { body: SUBMIT });
    const answer = await refusedOver(
      fixture,
      () => fixture.call('POST', '/v1/submit', { body: { ...SUBMIT, thread: 'other' } }),
      429,
      'QueueFull',
      /./,
    );
    assert.equal(answer.headers.get('retry-after'), '1');
    assert.equal(answer.body.retriable, true);
  });

  it('Stopped: 503', async (t) => {
    const fixture = await serverOn(t);
    await fixture.queue.stop();
    // The stopped queue has closed its log: nothing can be written, nor its size read.
    assertProblem(await fixture.call('POST', '/v1/submit', { body: SUBMIT }), 503, 'Stopped', /stopped/);
  });

  it('LogUnavailable: 503 with retry-after, retriable (an append that fails)', async (t) => {
    let failing = false;
    const openLog = async (partitions: number) => {
      const log = await openMemoryLog({ partitions });
      return wrapLog(log, {
        append: (partition, records) =>
          failing ? Promise.reject(new RunlogError('LogUnavailable', 'the disk went away')) : log.append(partition, records),
      });
    };
    const fixture = await serverOn(t, { openLog });
    failing = true;
    const answer = await refusedOver(
      fixture,
      () => fixture.call('POST', '/v1/submit', { body: SUBMIT }),
      503,
      'LogUnavailable',
      /the disk went away/,
    );
    assert.equal(answer.headers.get('retry-after'), '1');
    assert.equal(answer.body.retriable, true);
  });

  it('InvalidArgument: 400 (see malformed.test.ts for the table)', async (t) => {
    const fixture = await serverOn(t);
    await refusedOver(
      fixture,
      () => fixture.call('POST', '/v1/take', { body: { ...TAKE, agents: [] } }),
      400,
      'InvalidArgument',
      /agents must be a non-empty array/,
    );
  });

  it('Unauthorized: 401 with www-authenticate; Forbidden: 403', async (t) => {
    const authenticator = openAuthenticator([{ name: 'reader', token: 'reader-token-0123456789', tenants: '*', roles: ['producer'] }]);
    const fixture = await serverOn(t, { authenticator });
    const answer = await refusedOver(fixture, () => fixture.call('GET', '/v1/now'), 401, 'Unauthorized', /bearer token/);
    assert.equal(answer.headers.get('www-authenticate'), 'Bearer');
    await refusedOver(
      fixture,
      () => fixture.call('POST', '/v1/take', { body: TAKE, token: 'reader-token-0123456789' }),
      403,
      'Forbidden',
      /reader may not .* needs the role worker/,
    );
  });

  it('Internal: 500 naming the request; the stack goes to the server log only', async (t) => {
    const fixture = await serverOn(t);
    const logger = new RecordingLogger();
    // The real queue with one method broken, as a bug would break it.
    const queue = wrapQueue(fixture.local, { metrics: async () => Promise.reject(new TypeError('a bug in metrics')) });
    const server = await startServer({
      queue,
      logger,
      authenticator: openAuthenticator(),
      host: '127.0.0.1',
      port: 0,
      maxInputBytes: 1024,
    });
    onCleanup(t, () => server.close());
    const answer = await caller(server.url)('GET', '/v1/metrics');
    const requestId = answer.headers.get('runlog-request-id');
    assertProblem(answer, 500, 'Internal', new RegExp(`^internal error, request ${requestId}$`));
    assert.doesNotMatch(JSON.stringify(answer.body), /a bug in metrics|TypeError/);
    const internal = logger.lines.find((line) => line.event === 'http.internal');
    assert.equal(internal?.level, 'error');
    assert.equal(internal?.fields.requestId, requestId);
    assert.match(String(internal?.fields.error), /TypeError: a bug in metrics\n\s+at /);
    const failed = logger.lines.find((line) => line.event === 'http.error');
    assert.deepEqual(failed?.fields.status, 500);
  });
});

describe('server: request log', () => {
  it('logs one debug line per request: method, path, status, ms, caller, request id', async (t) => {
    const fixture = await serverOn(t);
    const answer = await fixture.call('GET', '/v1/now');
    const lines = fixture.logger.lines.filter((line) => line.event === 'http.request');
    assert.equal(lines.length, 1);
    const [{ level, fields }] = lines as [(typeof lines)[0]];
    assert.equal(level, 'debug');
    assert.deepEqual(
      { ...fields, ms: typeof fields.ms },
      {
        method: 'GET',
        path: '/v1/now',
        status: 200,
        ms: 'number',
        caller: 'anonymous',
        requestId: answer.headers.get('runlog-request-id'),
      },
    );
    assert.equal(fixture.logger.lines.filter((line) => line.level === 'error').length, 0);
  });

  it('a logger that throws breaks no answer and does not end the server', async (t) => {
    const fixture = await serverOn(t);
    const server = await startServer({
      queue: fixture.local,
      logger: {
        log() {
          throw new Error('the log disk is full');
        },
      },
      authenticator: openAuthenticator(),
      host: '127.0.0.1',
      port: 0,
      maxInputBytes: 1024,
    });
    onCleanup(t, () => server.close());
    const call = caller(server.url);
    for (let i = 0; i < 3; i++) assert.deepEqual((await call('GET', '/v1/now')).body, { now: fixture.clock.nowMs });
    assert.equal((await call('GET', '/v1/metrics')).status, 200);
  });
});
