/**
 * Auth on a real `runlog serve` child process (tokens from a file, a scratch file log, a
 * free loopback port): a wrong or missing token is 401; another tenant's token reads the
 * entry exactly as an unknown ticket and may not submit for it (403); a token without the
 * route's role is 403; valid tokens submit, take and close. Then TLS: the same serve over
 * HTTPS with a self-signed certificate made by openssl.
 */
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { request } from 'node:https';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { scratchDir } from '../support/cleanup.ts';
import { selfSigned } from './self-signed.ts';
import { spawnServe } from './serve-child.ts';

const TOKEN = {
  acmeProducer: 'acme-producer-0123456789',
  acmeWorker: 'acme-worker-0123456789',
  betaProducer: 'beta-producer-0123456789',
  wrong: 'acme-producer-0123456788',
};

const TOKENS = [
  { name: 'acme-producer', token: TOKEN.acmeProducer, tenants: ['acme'], roles: ['producer'] },
  { name: 'acme-worker', token: TOKEN.acmeWorker, tenants: ['acme'], roles: ['worker'] },
  { name: 'beta-producer', token: TOKEN.betaProducer, tenants: ['beta'], roles: ['producer'] },
];

interface Answer {
  status: number;
  headers: Headers;
  body: Record<string, unknown>;
}

function client(url: string) {
  return async (method: string, path: string, token: string | undefined, body?: unknown): Promise<Answer> => {
    const headers: Record<string, string> = {};
    if (token !== undefined) headers.authorization = `Bearer ${token}`;
    if (body !== undefined) headers['content-type'] = 'application/json';
    const response = await fetch(`${url}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    return { status: response.status, headers: response.headers, body: (await response.json()) as Record<string, unknown> };
  };
}

async function tokensFile(dir: string): Promise<string> {
  const file = join(dir, 'tokens.json');
  await writeFile(file, JSON.stringify(TOKENS));
  return file;
}

describe('runlog serve: auth on a real process', () => {
  it('refuses wrong tokens and roles, hides other tenants, and serves valid tokens', async (t) => {
    const dir = await scratchDir(t, 'runlog-serve-auth-');
    const serve = spawnServe(t, ['--dir', join(dir, 'data'), '--port', '0', '--host', '127.0.0.1', '--tokens', await tokensFile(dir)]);
    const { url } = await serve.started();
    const call = client(url);
    const submit = { tenant: 'acme', thread: 'orders', agent: 'billing', inputText: 'charge 42' };

    for (const token of [undefined, TOKEN.wrong, 'x']) {
      const refused = await call('POST', '/v1/submit', token, submit);
      assert.equal(refused.status, 401, `token ${token}`);
      assert.equal(refused.headers.get('www-authenticate'), 'Bearer');
      assert.equal(refused.body.code, 'Unauthorized');
      assert.equal(refused.body.message, 'a valid bearer token is required (authorization: Bearer <token>)');
    }

    const ticket = await call('POST', '/v1/submit', TOKEN.acmeProducer, submit);
    assert.equal(ticket.status, 200);
    const entryId = String(ticket.body.entryId);
    const entryPath = `/v1/tenants/acme/entries/${entryId}`;
    assert.equal((await call('GET', entryPath, TOKEN.acmeProducer)).body.status, 'open');

    // Another tenant's token: the entry reads exactly as a ticket never issued (the same answer as for a made-up id).
    const hidden = await call('GET', entryPath, TOKEN.betaProducer);
    const madeUp = `${entryId.slice(0, -4)}${entryId.endsWith('AAAA') ? 'BBBB' : 'AAAA'}`;
    const unknown = await call('GET', `/v1/tenants/acme/entries/${madeUp}`, TOKEN.acmeProducer);
    assert.equal(hidden.status, 404);
    assert.equal(hidden.body.code, 'TicketNotFound');
    const asUnknown: Record<string, unknown> = { ...unknown.body, message: String(unknown.body.message).replace(madeUp, entryId) };
    assert.deepEqual(hidden.body, asUnknown);
    const cancel = await call('POST', `${entryPath}/cancel`, TOKEN.betaProducer, {});
    assert.deepEqual([cancel.status, cancel.body.code], [404, 'TicketNotFound']);
    const thread = await call('GET', '/v1/tenants/acme/threads/orders/entries', TOKEN.betaProducer);
    assert.deepEqual([thread.status, thread.body], [200, { entries: [] }]);
    const foreign = await call('POST', '/v1/submit', TOKEN.betaProducer, submit);
    assert.deepEqual([foreign.status, foreign.body.code], [403, 'Forbidden']);

    // The wrong role.
    const producerTakes = await call('POST', '/v1/take', TOKEN.acmeProducer, { agents: ['billing'], holder: 'w', ttlMs: 30_000 });
    assert.deepEqual([producerTakes.status, producerTakes.body.code], [403, 'Forbidden']);
    const workerSubmits = await call('POST', '/v1/submit', TOKEN.acmeWorker, submit);
    assert.deepEqual([workerSubmits.status, workerSubmits.body.code], [403, 'Forbidden']);
    const workerDeletes = await call('DELETE', '/v1/tenants/acme/threads/orders', TOKEN.acmeWorker);
    assert.deepEqual([workerDeletes.status, workerDeletes.body.code], [403, 'Forbidden']);

    // The right tokens do the work.
    const taken = await call('POST', '/v1/take', TOKEN.acmeWorker, { agents: ['billing'], holder: 'w', ttlMs: 30_000 });
    assert.equal(taken.status, 200, JSON.stringify(taken.body));
    const { lease } = taken.body.taken as { lease: Record<string, unknown> };
    assert.equal(lease.entryId, entryId);
    const closed = await call('POST', '/v1/leases/close', TOKEN.acmeWorker, { lease, request: { status: 'succeeded', resultText: 'ok' } });
    assert.deepEqual([closed.status, closed.body.outcome], [200, 'succeeded']);
    assert.equal((await call('GET', entryPath, TOKEN.acmeProducer)).body.outcome, 'succeeded');
    assert.ok(!serve.records.some((record) => record.event === 'serve.loopback-only'), 'with tokens, no loopback warning');
  });

  it('serves HTTPS with a certificate and key', async (t) => {
    const dir = await scratchDir(t, 'runlog-serve-tls-');
    const tls = selfSigned(dir);
    const args = ['--dir', join(dir, 'data'), '--port', '0', '--host', '127.0.0.1', '--tokens', await tokensFile(dir)];
    const serve = spawnServe(t, [...args, '--tls-cert', tls.certFile], { RUNLOG_TLS_KEY: tls.keyFile });
    const { url, port } = await serve.started();
    assert.equal(url, `https://127.0.0.1:${port}`);
    assert.equal(serve.records.find((record) => record.event === 'serve.listening')!.tls, true);

    const get = (path: string, ca?: Buffer) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const headers = { authorization: `Bearer ${TOKEN.acmeProducer}` };
        const sent = request(`${url}${path}`, { headers, ...(ca === undefined ? {} : { ca }) }, (response) => {
          let body = '';
          response.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
          response.on('end', () => resolve({ status: response.statusCode!, body }));
        });
        sent.on('error', reject).end();
      });
    const now = await get('/v1/now', tls.cert);
    assert.equal(now.status, 200);
    assert.equal(typeof (JSON.parse(now.body) as { now: unknown }).now, 'number');
    // Without the certificate as a trusted CA, the client refuses the server.
    await assert.rejects(get('/v1/now'), { code: 'DEPTH_ZERO_SELF_SIGNED_CERT' });
    // Plain HTTP to the TLS port gets no HTTP answer.
    await assert.rejects(fetch(`http://127.0.0.1:${port}/v1/now`));
  });
});
