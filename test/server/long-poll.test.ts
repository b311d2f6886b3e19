/**
 * Long-polls over a real server: a take waits for work (woken by a submit from another
 * connection, or by the store-clock time nextDueAt names), ends holding nothing when its
 * client goes away, answers `{ taken: null }` when the server closes; awaitClosed waits for a
 * close; /v1/work streams the work signal. No timing is asserted: a take that waited for its
 * 30 s waitMs would run past the test's timeout.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { RunQueue } from '../../src/queue/run-queue.ts';
import { callsOf, serverOn, SUBMIT, TAKE } from './fixtures.ts';

const LONG = 30_000;
const TEST = { timeout: 15_000 };

/** A server whose queue tells when a long-poll take is about to wait (it asks nextDueAt after a take found nothing). */
async function waitingServer(t: Parameters<typeof serverOn>[0]) {
  let probe: ReturnType<typeof callsOf<'nextDueAt'>> | undefined;
  const fixture = await serverOn(t, { wrap: (queue: RunQueue) => (probe = callsOf(queue, 'nextDueAt')).queue });
  return { ...fixture, waiting: probe!.next };
}

describe('server: long-poll take', () => {
  it('is woken by a submit from another connection, and answers the entry', TEST, async (t) => {
    const { call, waiting } = await waitingServer(t);
    const waited = waiting();
    const take = call('POST', '/v1/take', { body: { ...TAKE, waitMs: LONG } });
    await waited;
    const { body: ticket } = await call('POST', '/v1/submit', { body: SUBMIT });
    const answer = await take;
    assert.equal(answer.status, 200);
    assert.equal(answer.body.taken.entry.entryId, ticket.entryId);
    assert.equal(answer.body.taken.lease.holder, 'w1');
  });

  it('is woken at the store-clock time nextDueAt names (a delayed entry becoming due)', TEST, async (t) => {
    const { call, clock, waiting } = await waitingServer(t);
    const { body: ticket } = await call('POST', '/v1/submit', { body: { ...SUBMIT, notBefore: clock.nowMs + 200 } });
    const waited = waiting();
    const take = call('POST', '/v1/take', { body: { ...TAKE, waitMs: LONG } });
    await waited;
    clock.advance(200); // no command runs, so no work signal: only the timer of nextDueAt wakes the take
    const answer = await take;
    assert.equal(answer.body.taken.entry.entryId, ticket.entryId);
  });

  it('answers { taken: null } when waitMs passes with nothing to take', TEST, async (t) => {
    const { call } = await serverOn(t);
    assert.deepEqual((await call('POST', '/v1/take', { body: { ...TAKE, waitMs: 20 } })).body, { taken: null });
  });

  it('waits no longer than the server maxWaitMs', TEST, async (t) => {
    const { call } = await serverOn(t, { maxWaitMs: 10 });
    assert.deepEqual((await call('POST', '/v1/take', { body: { ...TAKE, waitMs: LONG } })).body, { taken: null });
  });

  it('ended by its client going away, holds no lease and takes nothing later', TEST, async (t) => {
    const { call, queue, logger, waiting } = await waitingServer(t);
    const abort = new AbortController();
    const waited = waiting();
    const take = call('POST', '/v1/take', { body: { ...TAKE, waitMs: LONG }, signal: abort.signal });
    await waited;
    const logged = new Promise<void>((resolve) => {
      const log = logger.log.bind(logger);
      logger.log = (level, event, fields) => {
        log(level, event, fields);
        if (event === 'http.request' && fields?.path === '/v1/take') resolve();
      };
    });
    abort.abort();
    await assert.rejects(take, { name: 'AbortError' });
    await logged; // the server ended the request
    const { entryId } = await queue.submit({ tenant: 'acme', thread: 't', agent: 'billing', input: 'x' });
    const entry = await queue.entry('acme', entryId);
    assert.equal(entry.lease, null);
    assert.equal((await queue.take(TAKE))?.entry.entryId, entryId, 'the entry is free for the next taker');
  });

  it('many long-polls at once: each answers { taken: null } when the server closes, with no warning of listeners', TEST, async (t) => {
    const { call, server, waiting } = await waitingServer(t);
    const warnings: Error[] = [];
    const onWarning = (warning: Error): number => warnings.push(warning);
    process.on('warning', onWarning);
    t.after(() => process.off('warning', onWarning));
    const takes: Promise<{ body: unknown }>[] = [];
    for (let i = 0; i < 32; i++) {
      const waited = waiting();
      takes.push(call('POST', '/v1/take', { body: { ...TAKE, holder: `w${i}`, waitMs: LONG } }));
      await waited;
    }
    await server.close();
    for (const take of takes) assert.deepEqual((await take).body, { taken: null });
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(warnings.map(String), []);
  });

  it('answers { taken: null } when the server closes during the wait, and close() resolves after answering it', TEST, async (t) => {
    const { call, server, waiting } = await waitingServer(t);
    const waited = waiting();
    const take = call('POST', '/v1/take', { body: { ...TAKE, waitMs: LONG } });
    await waited;
    const closed = server.close();
    const answer = await take;
    assert.equal(answer.status, 200);
    assert.deepEqual(answer.body, { taken: null });
    assert.equal(answer.headers.get('connection'), 'close');
    await closed;
    await assert.rejects(call('GET', '/healthz'), 'the server no longer accepts connections');
  });
});

describe('server: long-poll awaitClosed', () => {
  async function awaitingServer(t: Parameters<typeof serverOn>[0]) {
    let probe: ReturnType<typeof callsOf<'awaitClosed'>> | undefined;
    const fixture = await serverOn(t, { wrap: (queue: RunQueue) => (probe = callsOf(queue, 'awaitClosed')).queue });
    const { entryId } = await fixture.local.submit({ tenant: 'acme', thread: 't', agent: 'billing', input: 'x' });
    return { ...fixture, entryId, awaiting: probe!.next };
  }

  it('answers the entry once it closes', TEST, async (t) => {
    const { call, local, entryId, awaiting } = await awaitingServer(t);
    const awaited = awaiting();
    const closed = call('GET', `/v1/tenants/acme/entries/${entryId}/closed?waitMs=${LONG}`);
    await awaited;
    await local.cancel('acme', entryId, 'no longer wanted');
    const answer = await closed;
    assert.equal(answer.status, 200);
    assert.deepEqual([answer.body.entry.entryId, answer.body.entry.outcome], [entryId, 'cancelled']);
  });

  it('answers { entry: null } when waitMs passes first, or at once with waitMs=0', TEST, async (t) => {
    const { call, entryId } = await awaitingServer(t);
    assert.deepEqual((await call('GET', `/v1/tenants/acme/entries/${entryId}/closed?waitMs=0`)).body, { entry: null });
    assert.deepEqual((await call('GET', `/v1/tenants/acme/entries/${entryId}/closed?waitMs=20`)).body, { entry: null });
  });

  it('answers { entry: null } when the server closes during the wait', TEST, async (t) => {
    const { call, server, entryId, awaiting } = await awaitingServer(t);
    const awaited = awaiting();
    const closed = call('GET', `/v1/tenants/acme/entries/${entryId}/closed?waitMs=${LONG}`);
    await awaited;
    const closing = server.close();
    assert.deepEqual((await closed).body, { entry: null });
    await closing;
  });
});

describe('server: /v1/work', () => {
  it('streams a work event when the queue signals work, and ends when the server closes', TEST, async (t) => {
    const { server, local } = await serverOn(t);
    const response = await fetch(`${server.url}/v1/work`);
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('content-type'), 'text/event-stream');
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = (await reader.read()).value ?? '';
    assert.match(text, /^: /, 'a comment opens the stream');
    await local.submit({ tenant: 'acme', thread: 't', agent: 'billing', input: 'x' });
    while (!text.includes('event: work\n')) text += (await reader.read()).value ?? '';
    assert.match(text, /event: work\ndata: \{\}\n\n/);
    await server.close();
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read());
  });

  it('a client that goes away ends its stream: later work signals write nothing and the server goes on', TEST, async (t) => {
    const { server, local, call, logger } = await serverOn(t);
    const abort = new AbortController();
    const response = await fetch(`${server.url}/v1/work`, { signal: abort.signal });
    const reader = response.body!.getReader();
    await reader.read();
    const ended = new Promise<void>((resolve) => {
      const log = logger.log.bind(logger);
      logger.log = (level, event, fields) => {
        log(level, event, fields);
        if (event === 'http.request' && fields?.path === '/v1/work') resolve();
      };
    });
    abort.abort();
    await ended;
    for (let i = 0; i < 3; i++) await local.submit({ tenant: 'acme', thread: `t${i}`, agent: 'billing', input: 'x' });
    assert.equal((await call('GET', '/healthz')).status, 200);
    assert.deepEqual(
      logger.lines.filter((line) => line.level === 'error'),
      [],
    );
  });
});
