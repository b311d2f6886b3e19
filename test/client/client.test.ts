/**
 * The client's own behaviour against a real server on loopback: the token checked at connect,
 * a server that is gone, what is retried and what is not, stop(), the long-polls (awaitClosed
 * in chunks, take woken by another connection's submit), now() and onWork over HTTP.
 */
import assert from 'node:assert/strict';
import { connect as connectTcp, createServer, type Server, type Socket } from 'node:net';
import { describe, it, type TestContext } from 'node:test';
import { connect, type ConnectOptions } from '../../src/client/index.ts';
import { isRunlogError } from '../../src/errors.ts';
import { canCloseRuns, closeRuns } from '../../src/queue/in-process.ts';
import { openMemoryLog } from '../../src/log/memory/memory-log.ts';
import type { RunQueue } from '../../src/queue/run-queue.ts';
import { openAuthenticator } from '../../src/server/auth.ts';
import type { LogLevel, Logger } from '../../src/server/types.ts';
import type { RunlogWarning } from '../../src/warnings.ts';
import { queueOn, submitOf } from '../contract/fixtures.ts';
import { deferred } from '../worker/fixtures.ts';
import { onCleanup } from '../support/cleanup.ts';
import { serve, type ServeOptions } from './fixtures.ts';
import { startServer } from '../../src/server/start-server.ts';

const memory = { openLog: (partitions: number) => openMemoryLog({ partitions }) };
const TAKE = { agents: ['build'], holder: 'w', ttlMs: 60_000 };
const NO_RETRY = { forMs: 0 };

/** Counts the requests the server served, by path. */
class RequestLog implements Logger {
  readonly paths: string[] = [];
  log(_level: LogLevel, event: string, fields: Record<string, unknown> = {}): void {
    if (event === 'http.request') this.paths.push(String(fields.path));
  }
  count(suffix: string): number {
    return this.paths.filter((path) => path.endsWith(suffix)).length;
  }
}

async function served(t: TestContext, options: ServeOptions = {}) {
  const fixture = await queueOn(memory, t);
  const server = await serve(fixture.local, options);
  onCleanup(t, () => server.close());
  const client = async (extra: Partial<ConnectOptions> = {}) => {
    const connected = await connect({ url: server.url, monotonicClock: fixture.clock.read, ...extra });
    onCleanup(t, () => connected.stop());
    return connected;
  };
  return { ...fixture, server, client };
}

/**
 * A TCP proxy in front of `target`: it passes bytes both ways until `dropping` is set, then
 * reads each request and drops its connection unanswered (a server that may have served it).
 */
async function droppingProxy(t: TestContext, target: string): Promise<{ url: string; dropping: boolean; dropped: number }> {
  const { hostname, port } = new URL(target);
  const proxy = { url: '', dropping: false, dropped: 0 };
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    const upstream = connectTcp(Number(port), hostname);
    for (const each of [socket, upstream]) {
      sockets.add(each);
      each.on('error', () => {});
      each.on('close', () => sockets.delete(each));
    }
    socket.on('data', (data) => {
      if (!proxy.dropping) return void upstream.write(data);
      proxy.dropped++;
      socket.destroy();
      upstream.destroy();
    });
    upstream.on('data', (data) => socket.write(data));
    upstream.on('close', () => socket.destroy());
    socket.on('close', () => upstream.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onCleanup(t, async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  proxy.url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  return proxy;
}

/** A server over `local` on a given port (one that was closed, started again). */
function serveOnPort(local: RunQueue, port: number) {
  return startServer({
    queue: local,
    authenticator: openAuthenticator(),
    logger: { log: () => {} },
    host: '127.0.0.1',
    port,
    maxInputBytes: local.maxInputBytes,
  });
}

describe('the client', () => {
  it('connect checks the token: a wrong one is Unauthorized, a right one serves, a role it lacks is Forbidden', async (t) => {
    const tokens = [
      { name: 'producer', token: 'producer-token-0123456789', tenants: '*' as const, roles: ['producer' as const] },
      { name: 'worker', token: 'worker-token-0123456789ab', tenants: '*' as const, roles: ['worker' as const] },
    ];
    const { server, client } = await served(t, { authenticator: openAuthenticator(tokens) });
    await assert.rejects(connect({ url: server.url, token: 'wrong-token-0123456789abc' }), (e: unknown) => {
      assert.ok(isRunlogError(e, 'Unauthorized') && e.message.endsWith('the token given was refused'), String(e));
      assert.ok(!e.message.includes('wrong-token'), 'never the token itself');
      return true;
    });
    await assert.rejects(connect({ url: server.url }), {
      code: 'Unauthorized',
      message: /no token was given \(connect's `token` option\)$/,
    });
    const producer = await client({ token: tokens[0]!.token });
    const ticket = await producer.submit(submitOf('acme', 't1'));
    const worker = await client({ token: tokens[1]!.token });
    await assert.rejects(worker.submit(submitOf('acme', 't2')), { code: 'Forbidden' });
    assert.equal((await worker.take(TAKE))!.lease.entryId, ticket.entryId);
  });

  it('a server that is gone: LogUnavailable naming its url, retriable; stop() never stops the server', async (t) => {
    const { local, server, client } = await served(t);
    const first = await client({ retry: NO_RETRY });
    const ticket = await first.submit(submitOf('acme', 't1'));
    await first.stop();
    const other = await client({ retry: NO_RETRY });
    assert.equal((await other.entry('acme', ticket.entryId)).status, 'open', 'the server serves on after a client stops');
    await server.close();
    for (const call of [() => other.entry('acme', ticket.entryId), () => other.submit(submitOf('acme', 't2')), () => other.take(TAKE)]) {
      await assert.rejects(call, (error: unknown) => {
        assert.ok(isRunlogError(error, 'LogUnavailable'), String(error));
        assert.ok(error.retriable);
        assert.match(error.message, new RegExp(server.url.replace(/[.]/g, '\\.')));
        return true;
      });
    }
    await assert.rejects(connect({ url: server.url, retry: NO_RETRY }), { code: 'LogUnavailable' });
    assert.equal((await local.entry('acme', ticket.entryId)).status, 'open');
  });

  it('a request the server may have served but did not answer is retried only when repeating it cannot do anything twice', async (t) => {
    const { server, clock, local } = await served(t);
    const proxy = await droppingProxy(t, server.url);
    const client = await connect({ url: proxy.url, monotonicClock: clock.read, retry: { forMs: 200, firstMs: 5, maxMs: 10 } });
    onCleanup(t, () => client.stop());
    const ticket = await client.submit(submitOf('acme', 't1'));
    const { lease } = (await client.take(TAKE))!;
    proxy.dropping = true;
    const triesOf = async (call: () => Promise<unknown>): Promise<number> => {
      const before = proxy.dropped;
      await assert.rejects(call, { code: 'LogUnavailable' });
      return proxy.dropped - before;
    };
    // Once: a repeat could lease a second entry, create a second one, or answer a refusal for what the first did.
    for (const call of [
      () => client.take(TAKE),
      () => client.takeEntry('acme', ticket.entryId, { holder: 'w', ttlMs: 1000 }),
      () => client.submit(submitOf('acme', 't2')),
      () => client.startAttempt(lease, 'run-1'),
      () => client.yield(lease, { kind: 'defer' }),
      () => client.close(lease, { status: 'succeeded' }),
      () => client.cancel('acme', ticket.entryId),
      () => client.deleteThread('acme', 't1'),
      () => client.prune(0, 10),
    ]) {
      assert.equal(await triesOf(call), 1, String(call));
    }
    // Repeatable: reads, extend, a submit with a key.
    for (const call of [
      () => client.entry('acme', ticket.entryId),
      () => client.openEntries('acme', 't1'),
      () => client.awaitClosed('acme', ticket.entryId, { timeoutMs: 0 }),
      () => client.nextDueAt(['build']),
      () => client.metrics(),
      () => client.health(),
      () => client.extend(lease, 1000),
      () => client.submit(submitOf('acme', 't3', { key: 'k' })),
    ]) {
      assert.ok((await triesOf(call)) > 1, String(call));
    }
    proxy.dropping = false;
    assert.equal((await client.entry('acme', ticket.entryId)).attempts.length, 0, 'nothing dropped reached the queue');
    assert.deepEqual(
      (await local.openEntries('acme', 't1')).map((e) => e.lease?.epoch),
      [1],
    );
  });

  it('a request that never left (connection refused) is retried for any call: a take reaches a server started again', async (t) => {
    const { local, server, client } = await served(t);
    const remote = await client({ retry: { forMs: 30_000, firstMs: 10, maxMs: 50 } });
    await remote.submit(submitOf('acme', 't1'));
    const port = Number(new URL(server.url).port);
    await server.close();
    // The client's one kept-alive connection may not have seen the server close it yet: a request sent
    // on it would be reset, not refused (it may have been read), and a take is not repeated then. A read
    // sent first gets that connection (and is repeated, being a read); the take opens a new one, refused.
    const reading = remote.metrics();
    const taking = remote.take(TAKE);
    const again = await serveOnPort(local, port);
    onCleanup(t, () => again.close());
    assert.equal((await taking)!.lease.epoch, 1);
    assert.equal((await reading).enqueued, 1);
  });

  it('stop() ends a pending awaitClosed and take long-poll with Stopped; later calls are Stopped; the server serves on', async (t) => {
    const { client } = await served(t);
    const remote = await client();
    const other = await client();
    const ticket = await remote.submit(submitOf('acme', 't1'));
    const waiting = remote.awaitClosed('acme', ticket.entryId);
    const taking = remote.take({ ...TAKE, agents: ['nobody'] }, { waitMs: 60_000 });
    await remote.stop();
    await assert.rejects(waiting, { code: 'Stopped' });
    await assert.rejects(taking, { code: 'Stopped' });
    await assert.rejects(remote.entry('acme', ticket.entryId), { code: 'Stopped' });
    await assert.rejects(remote.submit(submitOf('acme', 't2')), { code: 'Stopped' });
    assert.equal((await other.entry('acme', ticket.entryId)).status, 'open');
  });

  it("awaitClosed long-polls in chunks of the server's longest wait until the close; its signal aborts it with its reason", async (t) => {
    const requests = new RequestLog();
    const { client } = await served(t, { maxWaitMs: 20, logger: requests });
    const remote = await client();
    const ticket = await remote.submit(submitOf('acme', 't1'));
    const waiting = remote.awaitClosed('acme', ticket.entryId);
    while (requests.count('/closed') < 3) await new Promise((resolve) => setTimeout(resolve, 10));
    const { lease } = (await remote.take(TAKE))!;
    await remote.close(lease, { status: 'succeeded', result: 'done' });
    const closed = (await waiting)!;
    assert.deepEqual([closed.outcome, new TextDecoder().decode(closed.result!)], ['succeeded', 'done']);
    const other = await remote.submit(submitOf('acme', 't2'));
    assert.equal(await remote.awaitClosed('acme', other.entryId, { timeoutMs: 30 }), null);
    const aborted = new AbortController();
    const pending = remote.awaitClosed('acme', other.entryId, { signal: aborted.signal });
    aborted.abort(new Error('gave up'));
    await assert.rejects(pending, /gave up/);
  });

  it('a take long-poll is woken by a submit from another connection', async (t) => {
    const { client } = await served(t);
    const worker = await client();
    const producer = await client();
    const taking = worker.take(TAKE, { waitMs: 60_000 });
    const ticket = await producer.submit(submitOf('acme', 't1'));
    assert.equal((await taking)!.lease.entryId, ticket.entryId);
  });

  it("a Worker's closes go as close-batch with entries: false: answered without the closed entries, each item its refusal or null", async (t) => {
    const { client, local, server } = await served(t);
    const queue = await client();
    assert.ok(canCloseRuns(queue), 'the client offers closeRuns, which the Worker uses');
    const input = new Uint8Array(64 * 1024).fill(9);
    for (const thread of ['a', 'b', 'c']) await local.submit(submitOf('acme', thread, { input }));
    const [first, second, third] = (await queue.takeStarted({ ...TAKE, max: 3 })).map(({ lease }) => lease);
    await local.cancel('acme', second!.entryId);
    const answers = await queue[closeRuns]([
      { lease: first!, request: { status: 'succeeded' } },
      { lease: second!, request: { status: 'succeeded' } },
    ]);
    assert.equal(answers[0], null);
    assert.ok(isRunlogError(answers[1], 'EntryClosed'), String(answers[1]));
    assert.equal((await local.entry('acme', first!.entryId)).outcome, 'succeeded');
    // On the wire: `{ closed: true }`, no entry, so no input sent back.
    const raw = await fetch(`${server.url}/v1/leases/close-batch`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ closes: [{ lease: third!, request: { status: 'succeeded' } }], entries: false }),
    });
    assert.deepEqual(await raw.json(), { results: [{ closed: true }] });
  });

  it("now() follows the server's store clock", async (t) => {
    const { client, clock, local } = await served(t);
    const remote = await client();
    assert.equal(remote.now(), local.now());
    clock.advance(12_345);
    assert.equal(remote.now(), clock.nowMs);
    await remote.metrics();
    assert.equal(remote.now(), local.now());
  });

  it('onWork: a submit from another client fires it; when the server comes back the stream opens again and fires once', async (t) => {
    const { local, server, client } = await served(t);
    const warnings: RunlogWarning[] = [];
    const failed = deferred();
    const onWarning = (warning: RunlogWarning): void => {
      warnings.push(warning);
      if (/failed/.test(warning.message)) failed.resolve();
    };
    const remote = await client({ onWarning });
    const producer = await client();
    let fired = 0;
    let next = deferred();
    remote.onWork(() => {
      fired++;
      next.resolve();
    });
    await next.promise; // the stream opened
    next = deferred();
    await producer.submit(submitOf('acme', 't1'));
    await next.promise;
    const port = Number(new URL(server.url).port);
    await server.close();
    await failed.promise; // the stream ended, and opening it again was refused
    next = deferred();
    const again = await serveOnPort(local, port);
    onCleanup(t, () => again.close());
    await next.promise;
    assert.ok(fired >= 3);
    assert.deepEqual(
      warnings.map((warning) => [
        warning.code,
        /failed/.test(warning.message) ? 'failed' : /open again/.test(warning.message) ? 'open again' : warning.message,
      ]),
      [
        ['RUNLOG_WORK_STREAM', 'failed'],
        ['RUNLOG_WORK_STREAM', 'open again'],
      ],
    );
  });
});
