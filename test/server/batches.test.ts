/**
 * The batch routes over HTTP: submit-batch, take-started and leases/close-batch answer per
 * item; a malformed item is refused whole (400, naming the item) and writes nothing; tenant
 * scope: a submission for another tenant refuses the whole batch (403), another tenant's
 * lease is refused for its item alone (as not current).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { openAuthenticator, type TokenConfig } from '../../src/server/auth.ts';
import { allEvents, logSize } from '../contract/fixtures.ts';
import { assertProblem, serverOn, SUBMIT, TAKE, type ServerFixture } from './fixtures.ts';

const TOKENS = { producer: 'producer-acme-0123456789', worker: 'worker-acme-0123456789ab', admin: 'admin-everything-0123456' };
const CONFIG: TokenConfig[] = [
  { name: 'producer-acme', token: TOKENS.producer, tenants: ['acme'], roles: ['producer'] },
  { name: 'worker-acme', token: TOKENS.worker, tenants: ['acme'], roles: ['worker'] },
  { name: 'admin', token: TOKENS.admin, tenants: '*', roles: ['admin', 'producer', 'worker'] },
];

async function refusedWritingNothing(fixture: ServerFixture, request: () => Promise<{ status: number }>): Promise<any> {
  const before = await logSize(fixture.log);
  const answer = await request();
  assert.equal(await logSize(fixture.log), before, 'a refused request wrote to the log');
  return answer;
}

describe('server: batch routes', () => {
  it('submit-batch answers a ticket or a refusal per item; take-started leases and starts; close-batch closes', async (t) => {
    const fixture = await serverOn(t, { partitions: 1 });
    const { call } = fixture;
    const submitted = await call('POST', '/v1/submit-batch', {
      body: { requests: [SUBMIT, { ...SUBMIT, thread: 'order-2' }, { ...SUBMIT, strategy: 'reject' }] },
    });
    assert.equal(submitted.status, 200);
    const [first, second, busy] = submitted.body.results;
    assert.deepEqual(Object.keys(first.ticket).sort(), ['created', 'entryId', 'tenant', 'thread']);
    assert.equal(second.ticket.thread, 'order-2');
    assert.equal(busy.error.code, 'ThreadBusy');
    assert.equal(busy.error.status, 409);

    const started = await call('POST', '/v1/take-started', { body: { ...TAKE, max: 5 } });
    assert.equal(started.status, 200);
    assert.equal(started.body.started.length, 2);
    for (const { lease, entry, attempt } of started.body.started) {
      assert.equal(attempt.epoch, lease.epoch);
      assert.deepEqual(entry.attempts, [attempt]);
    }
    const [a, b] = started.body.started;
    const closed = await call('POST', '/v1/leases/close-batch', {
      body: {
        closes: [
          { lease: a.lease, request: { status: 'succeeded', resultText: 'done' } },
          { lease: b.lease, request: { status: 'failed', error: 'no' } },
          { lease: a.lease, request: { status: 'succeeded' } },
        ],
      },
    });
    assert.equal(closed.status, 200);
    const [ok, failed, again] = closed.body.results;
    assert.equal(ok.entry.outcome, 'succeeded');
    assert.equal(Buffer.from(ok.entry.result, 'base64').toString(), 'done');
    assert.equal(failed.entry.outcome, 'failed');
    assert.equal(again.error.code, 'EntryClosed');
    const types = (await allEvents(fixture.log)).map((event) => event.type);
    assert.deepEqual(types.slice(-6), ['Leased', 'AttemptStarted', 'Leased', 'AttemptStarted', 'Closed', 'Closed']);
  });

  const malformed: { name: string; path: string; body: (lease: Record<string, unknown>) => unknown; message: RegExp }[] = [
    {
      name: 'requests not an array',
      path: '/v1/submit-batch',
      body: () => ({ requests: SUBMIT }),
      message: /^body\.requests must be an array/,
    },
    {
      name: 'no requests',
      path: '/v1/submit-batch',
      body: () => ({ requests: [] }),
      message: /^requests must hold 1 to 10000 items, got 0$/,
    },
    {
      name: 'an item with an unknown field',
      path: '/v1/submit-batch',
      body: () => ({ requests: [SUBMIT, { ...SUBMIT, colour: 'red' }] }),
      message: /^body\.requests\[1\]\.colour is not a field/,
    },
    {
      name: 'an item with input and inputText',
      path: '/v1/submit-batch',
      body: () => ({ requests: [SUBMIT, { ...SUBMIT, input: 'aGk=' }] }),
      message: /^requests\[1\]: body gives both input and inputText/,
    },
    {
      name: 'an item with a bad tenant',
      path: '/v1/submit-batch',
      body: () => ({ requests: [SUBMIT, { ...SUBMIT, tenant: '' }] }),
      message: /^requests\[1\]: tenant must be a non-empty string, got ""$/,
    },
    { name: 'take-started max 0', path: '/v1/take-started', body: () => ({ ...TAKE, max: 0 }), message: /^max must be/ },
    {
      name: 'take-started max a string',
      path: '/v1/take-started',
      body: () => ({ ...TAKE, max: '2' }),
      message: /^body\.max must be an integer/,
    },
    {
      name: 'take-started a wait',
      path: '/v1/take-started',
      body: () => ({ ...TAKE, waitMs: 10 }),
      message: /^body\.waitMs is not a field/,
    },
    {
      name: 'take-started maxAttempts 0',
      path: '/v1/take-started',
      body: () => ({ ...TAKE, maxAttempts: 0 }),
      message: /^maxAttempts must be/,
    },
    { name: 'closes missing', path: '/v1/leases/close-batch', body: () => ({}), message: /^body\.closes is missing/ },
    {
      name: 'no close',
      path: '/v1/leases/close-batch',
      body: () => ({ closes: [] }),
      message: /^closes must hold 1 to 10000 items, got 0/,
    },
    {
      name: 'a close with a bad status',
      path: '/v1/leases/close-batch',
      body: (lease) => ({ closes: [{ lease, request: { status: 'done' } }] }),
      message: /^body\.closes\[0\]\.request\.status must be/,
    },
    {
      name: 'a close with result and resultText',
      path: '/v1/leases/close-batch',
      body: (lease) => ({
        closes: [
          { lease, request: { status: 'succeeded' } },
          { lease, request: { status: 'succeeded', result: 'aGk=', resultText: 'hi' } },
        ],
      }),
      message: /^closes\[1\]: body\.request gives both result and resultText/,
    },
    {
      name: 'a close with a bad epoch',
      path: '/v1/leases/close-batch',
      body: (lease) => ({
        closes: [
          { lease, request: { status: 'succeeded' } },
          { lease: { ...lease, epoch: 0 }, request: { status: 'succeeded' } },
        ],
      }),
      message: /^closes\[1\]: lease\.epoch must be/,
    },
  ];
  for (const row of malformed) {
    it(`refuses ${row.name} with 400 naming it, writing nothing`, async (t) => {
      const fixture = await serverOn(t);
      await fixture.call('POST', '/v1/submit', { body: SUBMIT });
      const lease = (await fixture.call('POST', '/v1/take', { body: TAKE })).body.taken.lease;
      const answer = await refusedWritingNothing(fixture, () => fixture.call('POST', row.path, { body: row.body(lease) }));
      assertProblem(answer, 400, 'InvalidArgument', row.message);
    });
  }

  it("a batch naming another tenant's submission is 403 whole; another tenant's lease is refused for its item alone", async (t) => {
    const fixture = await serverOn(t, { authenticator: openAuthenticator(CONFIG) });
    const { call } = fixture;
    const forbidden = await refusedWritingNothing(fixture, () =>
      call('POST', '/v1/submit-batch', { body: { requests: [SUBMIT, { ...SUBMIT, tenant: 'globex' }] }, token: TOKENS.producer }),
    );
    assertProblem(forbidden, 403, 'Forbidden', /globex/);
    await call('POST', '/v1/submit-batch', { body: { requests: [SUBMIT, { ...SUBMIT, tenant: 'globex' }] }, token: TOKENS.admin });
    const globex = (await call('POST', '/v1/take-started', { body: { ...TAKE, tenants: ['globex'] }, token: TOKENS.admin })).body.started;
    const acme = (await call('POST', '/v1/take-started', { body: { ...TAKE, max: 5 }, token: TOKENS.worker })).body.started;
    assert.deepEqual(
      acme.map((s: { entry: { tenant: string } }) => s.entry.tenant),
      ['acme'],
      'a scoped worker takes only its tenants',
    );
    const closed = await call('POST', '/v1/leases/close-batch', {
      body: { closes: [acme[0], globex[0]].map(({ lease }) => ({ lease, request: { status: 'succeeded' } })) },
      token: TOKENS.worker,
    });
    assert.equal(closed.body.results[0].entry.outcome, 'succeeded');
    assert.equal(closed.body.results[1].error.code, 'LeaseNotCurrent');
    const entry = await call('GET', `/v1/tenants/globex/entries/${globex[0].entry.entryId}`, { token: TOKENS.admin });
    assert.equal(entry.body.status, 'open', "the other tenant's entry is untouched");
  });
});
