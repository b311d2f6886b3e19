/** Malformed requests: each is refused with its status and a problem body naming the bad value, and writes nothing. */
import assert from 'node:assert/strict';
import net from 'node:net';
import { describe, it } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { connect } from '../../src/client/index.ts';
import { isRunlogError } from '../../src/errors.ts';
import { logSize } from '../contract/fixtures.ts';
import { assertProblem, serverOn, SUBMIT, TAKE, type CallOptions } from './fixtures.ts';

/** The queue's maxInputBytes in these tests: the body limit is then 1024 * 4/3 + 64 KiB = 66,902 bytes. */
const MAX_INPUT = 1024;
const BODY_LIMIT = Math.ceil((MAX_INPUT * 4) / 3) + 64 * 1024;

interface Case {
  name: string;
  method: string;
  /** `{entry}` is replaced by a real entry's id. */
  path: string;
  options?: (lease: Record<string, unknown>) => CallOptions;
  status: number;
  message: RegExp;
}

const cases: Case[] = [
  {
    name: 'bad JSON',
    method: 'POST',
    path: '/v1/submit',
    options: () => ({ raw: '{"tenant":', headers: { 'content-type': 'application/json' } }),
    status: 400,
    message: /^body is not valid JSON/,
  },
  {
    name: 'a JSON array body',
    method: 'POST',
    path: '/v1/submit',
    options: () => ({ body: [SUBMIT] }),
    status: 400,
    message: /^body must be an object, got \[/,
  },
  {
    name: 'a JSON null body',
    method: 'POST',
    path: '/v1/take',
    options: () => ({ raw: 'null', headers: { 'content-type': 'application/json' } }),
    status: 400,
    message: /^body must be an object, got null$/,
  },
  {
    name: 'an unknown field',
    method: 'POST',
    path: '/v1/submit',
    options: () => ({ body: { ...SUBMIT, colour: 'red' } }),
    status: 400,
    message: /^body\.colour is not a field this request takes \(unknown field\), got "red"$/,
  },
  {
    name: 'a misspelt option',
    method: 'POST',
    path: '/v1/take',
    options: () => ({ body: { ...TAKE, timeoutMs: 5 } }),
    status: 400,
    message: /^body\.timeoutMs is not a field/,
  },
  {
    name: 'a wrong type',
    method: 'POST',
    path: '/v1/take',
    options: () => ({ body: { ...TAKE, ttlMs: '30s' } }),
    status: 400,
    message: /^body\.ttlMs must be an integer, got "30s"$/,
  },
  {
    name: 'a fraction for an integer',
    method: 'POST',
    path: '/v1/submit',
    options: () => ({ body: { ...SUBMIT, priority: 1.5 } }),
    status: 400,
    message: /^body\.priority must be an integer, got 1\.5$/,
  },
  {
    name: 'a wrong type in an array',
    method: 'POST',
    path: '/v1/take',
    options: () => ({ body: { ...TAKE, agents: ['billing', 7] } }),
    status: 400,
    message: /^body\.agents\[1\] must be a string, got 7$/,
  },
  {
    name: 'a wrong type in metadata',
    method: 'POST',
    path: '/v1/submit',
    options: () => ({ body: { ...SUBMIT, metadata: { n: 1 } } }),
    status: 400,
    message: /^body\.metadata\.n must be a string, got 1$/,
  },
  {
    name: 'a word not in the list',
    method: 'POST',
    path: '/v1/submit',
    options: () => ({ body: { ...SUBMIT, strategy: 'later' } }),
    status: 400,
    message: /^body\.strategy must be "enqueue" or "reject", got "later"$/,
  },
  {
    name: 'a missing field',
    method: 'POST',
    path: '/v1/submit',
    options: () => ({ body: { tenant: 'acme', thread: 't', inputText: 'x' } }),
    status: 400,
    message: /^body\.agent is missing/,
  },
  {
    name: 'a missing nested field',
    method: 'POST',
    path: '/v1/leases/extend',
    options: ({ epoch: _, ...lease }) => ({ body: { lease, ttlMs: 1000 } }),
    status: 400,
    message: /^body\.lease\.epoch is missing/,
  },
  {
    name: 'a wrong nested type',
    method: 'POST',
    path: '/v1/leases/extend',
    options: (lease) => ({ body: { lease: { ...lease, epoch: 'one' }, ttlMs: 1000 } }),
    status: 400,
    message: /^body\.lease\.epoch must be an integer, got "one"$/,
  },
  {
    name: 'an unknown nested field',
    method: 'POST',
    path: '/v1/leases/close',
    options: (lease) => ({ body: { lease, request: { status: 'succeeded', output: 'x' } } }),
    status: 400,
    message: /^body\.request\.output is not a field/,
  },
  {
    name: 'a bad yield kind',
    method: 'POST',
    path: '/v1/leases/yield',
    options: (lease) => ({ body: { lease, request: { kind: 'pause' } } }),
    status: 400,
    message: /^body\.request\.kind must be "defer" or "retry", got "pause"$/,
  },
  {
    name: 'a defer with an error (the library)',
    method: 'POST',
    path: '/v1/leases/yield',
    options: (lease) => ({ body: { lease, request: { kind: 'defer', error: 'x' } } }),
    status: 400,
    message: /a defer takes no error/,
  },
  {
    name: 'bad base64',
    method: 'POST',
    path: '/v1/submit',
    options: () => ({ body: { tenant: 'acme', thread: 't', agent: 'a', input: 'not base64!' } }),
    status: 400,
    message: /^body\.input must be standard base64 with padding, got "not base64!"$/,
  },
  {
    name: 'base64 without padding',
    method: 'POST',
    path: '/v1/submit',
    options: () => ({ body: { tenant: 'acme', thread: 't', agent: 'a', input: 'QQ' } }),
    status: 400,
    message: /^body\.input must be standard base64/,
  },
  {
    name: 'a result in bad base64',
    method: 'POST',
    path: '/v1/leases/close',
    options: (lease) => ({ body: { lease, request: { status: 'succeeded', result: '%%%%' } } }),
    status: 400,
    message: /^body\.request\.result must be standard base64/,
  },
  {
    name: 'both input and inputText',
    method: 'POST',
    path: '/v1/submit',
    options: () => ({ body: { ...SUBMIT, input: 'QQ==' } }),
    status: 400,
    message: /^body gives both input and inputText: give one$/,
  },
  {
    name: 'neither input nor inputText',
    method: 'POST',
    path: '/v1/submit',
    options: () => ({ body: { tenant: 'acme', thread: 't', agent: 'a' } }),
    status: 400,
    message: /^body must give input \(base64\) or inputText \(text\)$/,
  },
  {
    name: 'both result and resultText',
    method: 'POST',
    path: '/v1/leases/close',
    options: (lease) => ({ body: { lease, request: { status: 'succeeded', result: 'QQ==', resultText: 'A' } } }),
    status: 400,
    message: /^body\.request gives both result and resultText/,
  },
  {
    name: 'an empty tenant (the library)',
    method: 'POST',
    path: '/v1/submit',
    options: () => ({ body: { ...SUBMIT, tenant: '' } }),
    status: 400,
    message: /^tenant must be a non-empty string, got ""$/,
  },
  {
    name: 'a lease length of 0 (the library)',
    method: 'POST',
    path: '/v1/take',
    options: () => ({ body: { ...TAKE, ttlMs: 0 } }),
    status: 400,
    message: /^ttlMs must be .*got 0$/,
  },
  {
    name: 'an input over maxInputBytes within the body limit (the library)',
    method: 'POST',
    path: '/v1/submit',
    options: () => ({ body: { ...SUBMIT, inputText: 'x'.repeat(MAX_INPUT + 1) } }),
    status: 400,
    message: /^input is 1025 bytes, more than the limit of 1024/,
  },
  {
    name: 'a query value of the wrong type',
    method: 'GET',
    path: '/v1/tenants/acme/entries/{entry}/closed?waitMs=soon',
    status: 400,
    message: /^query\.waitMs must be an integer >= 0 <= 60000, got "soon"$/,
  },
  {
    name: 'a query value out of range',
    method: 'GET',
    path: '/v1/tenants/acme/entries/{entry}/closed?waitMs=60001',
    status: 400,
    message: /^query\.waitMs must be an integer >= 0 <= 60000, got 60001$/,
  },
  {
    name: 'a repeated query parameter',
    method: 'GET',
    path: '/v1/tenants/acme/entries/{entry}/closed?waitMs=1&waitMs=2',
    status: 400,
    message: /^query\.waitMs must be an integer .*got \[ 1, 2 \]$/,
  },
  {
    name: 'an unknown query parameter',
    method: 'GET',
    path: '/v1/tenants/acme/entries/{entry}?fields=all',
    status: 400,
    message: /^query\.fields is not a field this request takes \(unknown field\), got "all"$/,
  },
  {
    name: "agents' window of 0 minutes",
    method: 'GET',
    path: '/v1/agents?minutes=0',
    status: 400,
    message: /^query\.minutes must be an integer >= 1 <= 1440, got 0$/,
  },
  {
    name: "agents' window longer than a day",
    method: 'GET',
    path: '/v1/agents?minutes=1441',
    status: 400,
    message: /^query\.minutes must be an integer >= 1 <= 1440, got 1441$/,
  },
  {
    name: "agents' window in words",
    method: 'GET',
    path: '/v1/agents?minutes=five',
    status: 400,
    message: /^query\.minutes must be an integer .*got "five"$/,
  },
  {
    name: "agents' empty tenant",
    method: 'GET',
    path: '/v1/agents?tenant=',
    status: 400,
    message: /^query\.tenant must be .*got ""$/,
  },
  {
    name: "agents' unknown query parameter",
    method: 'GET',
    path: '/v1/agents?agent=billing',
    status: 400,
    message: /^query\.agent is not a field this request takes \(unknown field\), got "billing"$/,
  },
  {
    name: "a history's unknown query parameter",
    method: 'GET',
    path: '/v1/tenants/acme/entries/{entry}/history?from=0',
    status: 400,
    message: /^query\.from is not a field this request takes \(unknown field\), got "0"$/,
  },
  {
    name: 'a history by POST',
    method: 'POST',
    path: '/v1/tenants/acme/entries/{entry}/history',
    status: 405,
    message: /it takes GET$/,
  },
  {
    name: 'a take waiting longer than 60 s',
    method: 'POST',
    path: '/v1/take',
    options: () => ({ body: { ...TAKE, waitMs: 120_000 } }),
    status: 400,
    message: /^body\.waitMs must be an integer >= 0 <= 60000, got 120000$/,
  },
  {
    name: 'a malformed percent-encoding in the path',
    method: 'GET',
    path: '/v1/tenants/%E0%A4%A/entries/{entry}',
    status: 400,
    message: /^path\.tenant is not a valid percent-encoded path segment, got "%E0%A4%A"$/,
  },
  {
    name: 'an oversized body (content-length)',
    method: 'POST',
    path: '/v1/submit',
    options: () => ({ body: { ...SUBMIT, inputText: 'x'.repeat(BODY_LIMIT) } }),
    status: 413,
    message: /^body is larger than the limit of 66902 bytes/,
  },
  {
    name: 'a wrong content type',
    method: 'POST',
    path: '/v1/submit',
    options: () => ({ raw: JSON.stringify(SUBMIT), headers: { 'content-type': 'text/plain' } }),
    status: 415,
    message: /^content-type must be application\/json, got "text\/plain"$/,
  },
  {
    name: 'a charset other than UTF-8',
    method: 'POST',
    path: '/v1/submit',
    options: () => ({ raw: JSON.stringify(SUBMIT), headers: { 'content-type': 'application/json; charset=iso-8859-1' } }),
    status: 415,
    message: /^content-type must name no charset or utf-8 \(JSON is UTF-8\), got "application\/json; charset=iso-8859-1"$/,
  },
  {
    name: 'a body that is not UTF-8 (a Latin-1 é), which would be stored as U+FFFD',
    method: 'POST',
    path: '/v1/submit',
    options: () => ({
      raw: Buffer.concat([
        Buffer.from('{"tenant":"acme","thread":"t","agent":"billing","inputText":"caf'),
        Buffer.from([0xe9, 0x22, 0x7d]),
      ]),
      headers: { 'content-type': 'application/json' },
    }),
    status: 400,
    message: /^body is not valid UTF-8 \(JSON is UTF-8\): /,
  },
  {
    name: 'no content type',
    method: 'POST',
    path: '/v1/submit',
    options: () => ({ raw: new TextEncoder().encode(JSON.stringify(SUBMIT)) }),
    status: 415,
    message: /^content-type must be application\/json, got null$/,
  },
  {
    name: 'form data',
    method: 'POST',
    path: '/v1/take',
    options: () => ({ raw: 'agents=billing', headers: { 'content-type': 'application/x-www-form-urlencoded' } }),
    status: 415,
    message: /got "application\/x-www-form-urlencoded"$/,
  },
  {
    name: 'an unknown route',
    method: 'GET',
    path: '/v1/entries',
    status: 404,
    message: /^no route for GET "\/v1\/entries" \(see \/openapi.json\)$/,
  },
  {
    name: 'an unknown version',
    method: 'POST',
    path: '/v2/submit',
    options: () => ({ body: SUBMIT }),
    status: 404,
    message: /^no route for POST "\/v2\/submit"/,
  },
  { name: 'an empty path segment', method: 'GET', path: '/v1/tenants//entries/{entry}', status: 404, message: /^no route for GET/ },
  {
    name: 'a wrong method',
    method: 'GET',
    path: '/v1/submit',
    status: 405,
    message: /^"GET" is not a method of \/v1\/submit: it takes POST$/,
  },
  {
    name: "close-batch's entries flag not a boolean",
    method: 'POST',
    path: '/v1/leases/close-batch',
    options: (lease) => ({ body: { closes: [{ lease, request: { status: 'succeeded' } }], entries: 'no' } }),
    status: 400,
    message: /^body\.entries must be a boolean, got "no"$/,
  },
  {
    name: 'a wrong method on a path with two',
    method: 'PUT',
    path: '/v1/tenants/acme/threads/t',
    status: 405,
    message: /it takes DELETE$/,
  },
];

describe('server: malformed requests', () => {
  for (const { name, method, path, options, status, message } of cases) {
    it(`${name}: ${status}`, async (t) => {
      const { call, queue, log } = await serverOn(t, { maxInputBytes: MAX_INPUT });
      const { entryId } = await queue.submit({ tenant: 'acme', thread: 'held', agent: 'billing', input: 'x' });
      const { lease } = (await queue.take(TAKE))!;
      const before = await logSize(log);
      const answer = await call(method, path.replace('{entry}', entryId), options?.(lease as unknown as Record<string, unknown>));
      assertProblem(answer, status, 'InvalidArgument', message);
      assert.equal(answer.body.retriable, false);
      assert.equal(await logSize(log), before, 'a refused request wrote to the log');
      if (status === 405) assert.ok(answer.headers.get('allow'), 'a 405 says which methods the path takes');
    });
  }

  it('an oversized body sent in chunks (no content-length) is refused at the limit, and the server reads no further', async (t) => {
    const { server, log } = await serverOn(t, { maxInputBytes: MAX_INPUT });
    const before = await logSize(log);
    let sent = 0;
    const chunk = new TextEncoder().encode('x'.repeat(16 * 1024));
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('{"tenant":"acme","thread":"t","agent":"a","inputText":"'));
      },
      pull(controller) {
        // An endless body: only a server that stops reading ends this request.
        sent += chunk.length;
        controller.enqueue(chunk);
      },
    });
    const response = await fetch(`${server.url}/v1/submit`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
      duplex: 'half',
    } as RequestInit);
    assert.equal(response.status, 413);
    assert.equal(((await response.json()) as { code: string }).code, 'InvalidArgument');
    assert.ok(sent < 100 * BODY_LIMIT, `the client was still sending after ${sent} bytes`);
    assert.equal(await logSize(log), before);
  });

  it('a 413 closes its connection (connection: close): the next call on a kept-alive client goes on a new one and is served', async (t) => {
    const { server, log } = await serverOn(t, { maxInputBytes: MAX_INPUT });
    const queue = await connect({ url: server.url });
    t.after(() => queue.stop());
    const big = new Uint8Array(MAX_INPUT).fill(1);
    for (let round = 0; round < 3; round++) {
      const before = await logSize(log);
      // Each item fits the queue's limit; together they pass the body's: refused whole, nothing written.
      const batch = Array.from({ length: 80 }, (_, i) => ({ tenant: 'acme', thread: 't', agent: 'a', input: big, key: `k${round}-${i}` }));
      await assert.rejects(
        queue.submitBatch(batch),
        (e: unknown) => isRunlogError(e, 'InvalidArgument') && /larger than the limit/.test(e.message),
      );
      assert.equal(await logSize(log), before);
      // Before: the server destroyed the socket after the 413 while it said keep-alive, and this call failed ECONNRESET (LogUnavailable).
      assert.ok((await queue.submit({ tenant: 'acme', thread: `small-${round}`, agent: 'a', input: 'small' })).entryId);
    }
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = net.connect(server.port, '127.0.0.1', () =>
        socket.write(`POST /v1/submit HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: ${BODY_LIMIT + 1}\r\n\r\n`),
      );
      let text = '';
      socket.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
      socket.on('close', () => resolve(text)).on('error', reject);
    });
    assert.match(answer, /^HTTP\/1\.1 413 /);
    assert.match(answer, /\r\nconnection: close\r\n/i);
  });

  it('a request target that is no URL path is 400, and the server goes on serving', async (t) => {
    const { server, call } = await serverOn(t);
    // fetch cannot send it: a raw request on a socket.
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = net.connect(server.port, '127.0.0.1', () =>
        socket.end('GET http://[ HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n'),
      );
      let text = '';
      socket.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
      socket.on('end', () => resolve(text)).on('error', reject);
    });
    assert.match(answer, /^HTTP\/1\.1 400 /);
    assert.match(answer, /"message":"the request target \\"http:\/\/\[\\" is not a valid path"/);
    assert.equal((await call('GET', '/healthz')).status, 200);
  });

  it('a body its client stops sending (the connection closed mid-body) is a bad request, not an Internal error', async (t) => {
    const { server, log, logger } = await serverOn(t, { maxInputBytes: MAX_INPUT });
    const before = await logSize(log);
    const socket = net.connect({ host: '127.0.0.1', port: server.port });
    await new Promise((resolve) => socket.once('connect', resolve));
    const head = 'POST /v1/submit HTTP/1.1\r\nhost: runlog\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n';
    socket.write(`${head}{"tenant":"acme"`); // 16 of the 100 bytes promised
    await delay(20);
    socket.destroy();
    while (!logger.lines.some((line) => line.event === 'http.request')) await delay(5);
    const [request] = logger.lines.filter((line) => line.event === 'http.request');
    assert.equal(request!.fields.status, 400);
    assert.deepEqual(
      logger.lines.filter((line) => line.level === 'error'),
      [],
      'a client going away is not the server failing',
    );
    assert.equal(await logSize(log), before);
  });
});
