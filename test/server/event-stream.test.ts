/**
 * GET /v1/events on a real server (loopback, a free port) over a real queue: events arrive
 * decoded; the filters; resumption from the id of the k-th event (Last-Event-ID and ?from=)
 * gives exactly the events after it, none lost, none twice; the stream follows new appends;
 * a client going away, or the server closing, releases the log's tails; bad positions,
 * filters and callers are refused before any byte of the stream.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decodeEvent } from '../../src/events/codec.ts';
import { eventJson } from '../../src/events/event-json.ts';
import type { EventLog, LogRecord } from '../../src/log/event-log.ts';
import { openAuthenticator, type TokenConfig } from '../../src/server/auth.ts';
import { startServer } from '../../src/server/start-server.ts';
import { logSize } from '../contract/fixtures.ts';
import { onCleanup } from '../support/cleanup.ts';
import { wrapLog } from '../support/wrap-log.ts';
import { assertProblem, RecordingLogger, serverOn, SUBMIT, TAKE, type ServerFixture } from './fixtures.ts';
import { openSse, type SseMessage, type SseStream } from './sse-reader.ts';

type EventData = Record<string, unknown> & { type: string; partition: number; offset: number };

const TOKENS = { admin: 'admin-everything-0123456', scoped: 'admin-acme-only-01234567', producer: 'producer-acme-0123456789' };
const CONFIG: TokenConfig[] = [
  { name: 'admin', token: TOKENS.admin, tenants: '*', roles: ['admin'] },
  { name: 'admin-acme', token: TOKENS.scoped, tenants: ['acme'], roles: ['admin'] },
  { name: 'producer-acme', token: TOKENS.producer, tenants: ['acme'], roles: ['producer'] },
];

function data(message: SseMessage | null): EventData {
  assert.ok(message, 'the stream ended early');
  return JSON.parse(message.data) as EventData;
}

async function take(stream: SseStream, count: number): Promise<SseMessage[]> {
  const messages: SseMessage[] = [];
  for (let i = 0; i < count; i++) {
    const message = await stream.next();
    assert.ok(message, `the stream ended after ${i} of ${count} messages`);
    messages.push(message);
  }
  return messages;
}

/** Every event in the log now, decoded as the stream sends it, partition by partition. */
async function logEvents(log: EventLog): Promise<EventData[]> {
  const events: EventData[] = [];
  for (let p = 0; p < log.partitions; p++) {
    for await (const record of log.read(p, 0n)) {
      if (record.value !== null) events.push(eventJson(decodeEvent(record.value), p, record.offset) as EventData);
    }
  }
  return events;
}

const place = (event: EventData): string => `${event.partition}@${event.offset}`;

async function submit(fixture: ServerFixture, body: Record<string, unknown> = {}): Promise<string> {
  const answer = await fixture.call('POST', '/v1/submit', { body: { ...SUBMIT, ...body } });
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  return answer.body.entryId as string;
}

async function sse(fixture: ServerFixture, query = '', headers: Record<string, string> = {}): Promise<SseStream> {
  const stream = await openSse(`${fixture.server.url}/v1/events${query}`, headers);
  assert.equal(stream.status, 200);
  return stream;
}

describe('server: /v1/events', () => {
  it('sends the log decoded: id, event type, data with bytes base64, partition and offset', async (t) => {
    const fixture = await serverOn(t, { partitions: 2 });
    const entryId = await submit(fixture);
    const lease = (await fixture.call('POST', '/v1/take', { body: TAKE })).body.taken.lease;
    await fixture.call('POST', '/v1/leases/close', { body: { lease, request: { status: 'succeeded', resultText: 'done' } } });
    const expected = await logEvents(fixture.log);
    const stream = await sse(fixture, '?from=0');
    onCleanup(t, () => stream.close());
    assert.equal(stream.headers.get('content-type'), 'text/event-stream; charset=utf-8');
    assert.ok(stream.headers.get('runlog-now'));
    const messages = await take(stream, expected.length);
    assert.deepEqual(
      messages.map(data).sort((a, b) => place(a).localeCompare(place(b))),
      expected.sort((a, b) => place(a).localeCompare(place(b))),
    );
    for (const message of messages) {
      assert.equal(message.event, data(message).type);
      assert.match(message.id!, /^\d+,\d+$/);
    }
    const ofEntry = messages.map(data).filter((event) => event.entryId === entryId);
    assert.deepEqual(
      ofEntry.map((event) => event.type),
      ['Submitted', 'Leased', 'Closed'],
    );
    assert.equal(Buffer.from(ofEntry[0]!.input as string, 'base64').toString(), 'hello');
    assert.equal(Buffer.from(ofEntry[2]!.result as string, 'base64').toString(), 'done');
    assert.ok(
      messages.map(data).every((event) => !('secret' in event)),
      'the ticket key is not sent',
    );
  });

  it('without from: only what is appended after it opened; it follows new appends', async (t) => {
    const fixture = await serverOn(t, { partitions: 2 });
    await submit(fixture, { thread: 'before' });
    const stream = await sse(fixture);
    onCleanup(t, () => stream.close());
    assert.match((await stream.nextComment())!, /^runlog events from \d+,\d+$/);
    const later = await submit(fixture, { thread: 'after-1' });
    const first = data(await stream.next());
    assert.deepEqual([first.type, first.entryId], ['Submitted', later]);
    const last = await submit(fixture, { thread: 'after-2' });
    const events = [data(await stream.next())];
    while (events.at(-1)!.entryId !== last) events.push(data(await stream.next()));
    assert.ok(events.every((event) => event.thread !== 'before'));
  });

  it('filters by tenant, thread and entry', async (t) => {
    const fixture = await serverOn(t, { partitions: 1 }); // one partition: the stream is in log order
    const acme1 = await submit(fixture, { tenant: 'acme', thread: 'order-1' });
    await submit(fixture, { tenant: 'acme', thread: 'order-2' });
    await submit(fixture, { tenant: 'globex', thread: 'order-1' });
    await fixture.call('POST', `/v1/tenants/acme/entries/${acme1}/cancel`, { body: { reason: 'changed my mind' } });
    const all = await logEvents(fixture.log);
    const cases: [query: string, keep: (event: EventData) => boolean, marker: Record<string, string>][] = [
      ['tenant=acme', (e) => e.tenant === 'acme', { tenant: 'acme', thread: 'marker' }],
      ['thread=order-1', (e) => e.thread === 'order-1', { tenant: 'initech', thread: 'order-1' }],
      ['tenant=acme&thread=order-1', (e) => e.tenant === 'acme' && e.thread === 'order-1', { tenant: 'acme', thread: 'order-1' }],
      [`tenant=acme&entry=${acme1}`, (e) => e.entryId === acme1, {}],
    ];
    for (const [query, keep, marker] of cases) {
      const stream = await sse(fixture, `?from=0&${query}`);
      onCleanup(t, () => stream.close());
      const expected = all.filter(keep);
      assert.ok(expected.length >= 1, query);
      assert.deepEqual((await take(stream, expected.length)).map(data), expected, query);
      if (Object.keys(marker).length === 0) continue;
      // Nothing else came before the next matching event, appended after.
      const next = await submit(fixture, marker);
      assert.equal(data(await stream.next()).entryId, next, query);
      all.push(...(await logEvents(fixture.log)).slice(all.length));
    }
  });

  for (const how of ['Last-Event-ID', '?from='] as const) {
    it(`resumes after the k-th event from its id (${how}): every later event, none twice`, async (t) => {
      const fixture = await serverOn(t, { partitions: 3 });
      for (let i = 0; i < 9; i++) await submit(fixture, { thread: `order-${i}` });
      const first = await sse(fixture, '?from=0');
      onCleanup(t, () => first.close());
      const before = await logEvents(fixture.log);
      const seen = await take(first, before.length);
      const k = 5;
      const id = seen[k - 1]!.id!;
      first.close();
      // More events after the id was taken: the resumed stream gets these too.
      for (let i = 9; i < 13; i++) await submit(fixture, { thread: `order-${i}` });
      const everything = await logEvents(fixture.log);
      const resumed = how === 'Last-Event-ID' ? await sse(fixture, '', { 'last-event-id': id }) : await sse(fixture, `?from=${id}`);
      onCleanup(t, () => resumed.close());
      const delivered = new Set(seen.slice(0, k).map((m) => place(data(m))));
      const rest = everything.filter((event) => !delivered.has(place(event)));
      const got = (await take(resumed, rest.length)).map(data);
      const byPlace = (a: EventData, b: EventData): number => a.partition - b.partition || a.offset - b.offset;
      assert.deepEqual(got.sort(byPlace), rest.sort(byPlace));
      // And nothing more: the next message is the one appended next.
      const marker = await submit(fixture, { thread: 'marker' });
      assert.equal(data(await resumed.next()).entryId, marker);
    });
  }

  it('from=0 on a log with nothing in it waits for the first append', async (t) => {
    const fixture = await serverOn(t, { partitions: 2 });
    const stream = await sse(fixture, '?from=0');
    onCleanup(t, () => stream.close());
    assert.equal((await stream.nextComment())!, 'runlog events from 0,0');
    const entryId = await submit(fixture);
    const events = [data(await stream.next())];
    while (events.at(-1)!.type !== 'Submitted') events.push(data(await stream.next()));
    assert.equal(events.at(-1)!.entryId, entryId);
  });

  it('a client going away, and the server closing, release every tail of the log', async (t) => {
    const fixture = await serverOn(t, { partitions: 2 });
    const tails = new TailCounter();
    const server = await startServer({
      queue: fixture.local,
      log: wrapLog(fixture.log, { tail: (partition, from, options) => tails.count(fixture.log.tail(partition, from, options)) }),
      authenticator: openAuthenticator(),
      logger: new RecordingLogger(),
      host: '127.0.0.1',
      port: 0,
      maxInputBytes: fixture.local.maxInputBytes,
    });
    onCleanup(t, () => server.close());
    const gone = await openSse(`${server.url}/v1/events?from=0`);
    await gone.nextComment();
    await tails.reach(2);
    gone.close();
    await tails.reach(0);

    const open = await openSse(`${server.url}/v1/events`);
    await open.nextComment();
    await tails.reach(2);
    await server.close();
    assert.equal(await open.next(), null, 'the stream ends when the server closes');
    await tails.reach(0);
  });

  describe('refusals, before any byte of the stream, writing nothing', () => {
    const cases: [name: string, query: string, headers: Record<string, string>, status: number, code: string, says: RegExp][] = [
      ['from not a position', '?from=end', {}, 400, 'InvalidArgument', /query\.from must be 0 or 2 offsets.*"end"/],
      ['from with too few offsets', '?from=5', {}, 400, 'InvalidArgument', /query\.from must be 0 or 2 offsets.*"5"/],
      ['from with too many offsets', '?from=1,2,3', {}, 400, 'InvalidArgument', /query\.from .*"1,2,3"/],
      ['a negative offset', '?from=-1,0', {}, 400, 'InvalidArgument', /query\.from .*"-1,0"/],
      ['from given twice', '?from=0&from=0', {}, 400, 'InvalidArgument', /query\.from/],
      ['Last-Event-ID not a position', '', { 'last-event-id': 'abc' }, 400, 'InvalidArgument', /Last-Event-ID header must be .*"abc"/],
      ['an empty tenant', '?tenant=', {}, 400, 'InvalidArgument', /query\.tenant/],
      ['an unknown parameter', '?partition=1', {}, 400, 'InvalidArgument', /partition/],
      ['a producer token', '?tenant=acme', { authorization: `Bearer ${TOKENS.producer}` }, 403, 'Forbidden', /needs the role admin/],
      ['no token', '', { authorization: '' }, 401, 'Unauthorized', /./],
      [
        'a scoped admin naming no tenant',
        '',
        { authorization: `Bearer ${TOKENS.scoped}` },
        400,
        'InvalidArgument',
        /query\.tenant is required/,
      ],
      [
        'a scoped admin naming another tenant',
        '?tenant=globex',
        { authorization: `Bearer ${TOKENS.scoped}` },
        403,
        'Forbidden',
        /tenant "globex"/,
      ],
    ];
    it('answers each with its problem', async (t) => {
      const fixture = await serverOn(t, { partitions: 2, authenticator: openAuthenticator(CONFIG) });
      const before = await logSize(fixture.log);
      for (const [name, query, headers, status, code, says] of cases) {
        await t.test(name, async () => {
          const answer = await fixture.call('GET', `/v1/events${query}`, {
            headers: { authorization: `Bearer ${TOKENS.admin}`, ...headers },
          });
          assertProblem(answer, status, code, says);
        });
      }
      assert.equal(await logSize(fixture.log), before);
    });

    it('a scoped admin naming its tenant gets only that tenant', async (t) => {
      const fixture = await serverOn(t, { partitions: 1, authenticator: openAuthenticator(CONFIG) });
      const admin = { authorization: `Bearer ${TOKENS.admin}` };
      await fixture.call('POST', '/v1/submit', { body: { ...SUBMIT, tenant: 'globex' }, headers: admin });
      const acme = (await fixture.call('POST', '/v1/submit', { body: SUBMIT, headers: admin })).body.entryId;
      const stream = await sse(fixture, '?from=0&tenant=acme', { authorization: `Bearer ${TOKENS.scoped}` });
      onCleanup(t, () => stream.close());
      const first = data(await stream.next());
      assert.deepEqual([first.type, first.tenant, first.entryId], ['Submitted', 'acme', acme]);
    });
  });
});

/** Counts a log's open tails (started and not yet finished); reach(n) resolves once n are open. */
class TailCounter {
  #open = 0;
  #waiters: { n: number; resolve: () => void }[] = [];

  async *count(records: AsyncIterable<LogRecord>): AsyncGenerator<LogRecord> {
    this.#change(+1);
    try {
      yield* records;
    } finally {
      this.#change(-1);
    }
  }

  reach(n: number): Promise<void> {
    if (this.#open === n) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.push({ n, resolve }));
  }

  #change(by: number): void {
    this.#open += by;
    const ready = this.#waiters.filter((w) => w.n === this.#open);
    this.#waiters = this.#waiters.filter((w) => w.n !== this.#open);
    for (const { resolve } of ready) resolve();
  }
}
