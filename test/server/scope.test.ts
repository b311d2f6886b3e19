/**
 * Roles and tenant scope over HTTP (WIRE "Auth"), with the serve engineer's token authenticator:
 * a caller without a route's role gets 403; another tenant's entry answers exactly as an
 * unknown ticket; a submit for another tenant is 403; another tenant's lease is refused as
 * not current; nothing is written by any of these.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { openAuthenticator, type TokenConfig } from '../../src/server/auth.ts';
import { ROUTES } from '../../src/server/routes.ts';
import { logSize } from '../contract/fixtures.ts';
import { assertProblem, serverOn, SUBMIT, TAKE, type ServerFixture } from './fixtures.ts';

const TOKENS = {
  producer: 'producer-acme-0123456789',
  worker: 'worker-acme-0123456789ab',
  admin: 'admin-everything-0123456',
  scopedAdmin: 'admin-acme-only-01234567',
};
const CONFIG: TokenConfig[] = [
  { name: 'producer-acme', token: TOKENS.producer, tenants: ['acme'], roles: ['producer'] },
  { name: 'worker-acme', token: TOKENS.worker, tenants: ['acme'], roles: ['worker'] },
  { name: 'admin', token: TOKENS.admin, tenants: '*', roles: ['admin'] },
  { name: 'admin-acme', token: TOKENS.scopedAdmin, tenants: ['acme'], roles: ['admin'] },
];

async function scopedServer(t: Parameters<typeof serverOn>[0]) {
  const fixture = await serverOn(t, { authenticator: openAuthenticator(CONFIG) });
  // globex's entry, leased by the unscoped admin: what acme's tokens must not see.
  const globex = (await fixture.call('POST', '/v1/submit', { body: { ...SUBMIT, tenant: 'globex' }, token: TOKENS.admin })).body;
  const globexLease = (await fixture.call('POST', '/v1/take', { body: TAKE, token: TOKENS.admin })).body.taken.lease;
  return { ...fixture, globex, globexLease };
}

/** Runs `request`, expects the refusal, and checks nothing was written. */
async function writesNothing<T>(fixture: ServerFixture, request: () => Promise<T>): Promise<T> {
  const before = await logSize(fixture.log);
  const answer = await request();
  assert.equal(await logSize(fixture.log), before, 'a refused request wrote to the log');
  return answer;
}

/** Routes that answer for every tenant at once: only an unscoped token may call them. */
const SPANS_TENANTS = new Set(['GET /v1/metrics', 'POST /v1/prune']);

describe('server: roles', () => {
  const cases: [role: keyof typeof TOKENS, method: string, path: string, body: unknown, status: number][] = [
    ['producer', 'POST', '/v1/take', TAKE, 403],
    [
      'producer',
      'POST',
      '/v1/leases/extend',
      { lease: { tenant: 'acme', thread: 't', entryId: '0-x', agent: 'a', holder: 'h', epoch: 1, expiresAt: 1 }, ttlMs: 1 },
      403,
    ],
    ['producer', 'GET', '/v1/work', undefined, 403],
    ['producer', 'DELETE', '/v1/tenants/acme/threads/t', undefined, 403],
    ['producer', 'POST', '/v1/prune', { ticketLifetimeMs: 0, limit: 1 }, 403],
    ['worker', 'POST', '/v1/submit', SUBMIT, 403],
    ['worker', 'POST', '/v1/tenants/acme/entries/0-x/cancel', {}, 403],
    ['worker', 'GET', '/v1/tenants/acme/entries/0-x/closed?waitMs=0', undefined, 403],
    ['worker', 'DELETE', '/v1/tenants/acme/threads/t', undefined, 403],
    ['producer', 'POST', '/v1/submit', SUBMIT, 200],
    ['producer', 'POST', '/v1/next-due', { agents: ['billing'] }, 200],
    ['worker', 'POST', '/v1/take', TAKE, 200],
    ['worker', 'GET', '/v1/tenants/acme/threads/t/entries', undefined, 200],
    ['worker', 'GET', '/v1/now', undefined, 200],
    ['admin', 'GET', '/v1/metrics', undefined, 200],
    ['admin', 'POST', '/v1/submit', SUBMIT, 200],
    ['admin', 'POST', '/v1/take', TAKE, 200],
    ['admin', 'DELETE', '/v1/tenants/acme/threads/t', undefined, 200],
    ['admin', 'POST', '/v1/prune', { ticketLifetimeMs: 0, limit: 1 }, 200],
  ];
  for (const [role, method, path, body, status] of cases) {
    it(`${role}: ${method} ${path} answers ${status}`, async (t) => {
      const fixture = await serverOn(t, { authenticator: openAuthenticator(CONFIG) });
      if (status === 403) {
        const answer = await writesNothing(fixture, () => fixture.call(method, path, { body, token: TOKENS[role] }));
        assertProblem(answer, 403, 'Forbidden', /may not .*: it needs the role/);
      } else {
        const answer = await fixture.call(method, path, { body, token: TOKENS[role] });
        assert.equal(answer.status, status, JSON.stringify(answer.body));
      }
    });
  }

  it('every route of the route table: 401 without a valid token, 403 for a role it does not list, passed for one it does', async (t) => {
    const fixture = await serverOn(t, { authenticator: openAuthenticator(CONFIG) });
    const before = await logSize(fixture.log);
    for (const route of ROUTES) {
      const path = route.path.replace('{tenant}', 'acme').replace('{thread}', 't').replace('{entryId}', '0-x');
      // The role is checked before the body is read: an empty JSON object is enough to get past it or not.
      const send = async (token?: string): Promise<number> => {
        const abort = new AbortController();
        const response = await fetch(`${fixture.server.url}${path}`, {
          method: route.method,
          headers: {
            ...(token ? { authorization: `Bearer ${token}` } : {}),
            ...(route.method === 'POST' ? { 'content-type': 'application/json' } : {}),
          },
          ...(route.method === 'POST' ? { body: '{}' } : {}),
          signal: abort.signal,
        });
        abort.abort(); // an event stream would go on
        return response.status;
      };
      const name = `${route.method} ${route.path}`;
      if (route.access === 'public') {
        assert.notEqual(await send(), 401, name);
        continue;
      }
      assert.equal(await send(), 401, name);
      assert.equal(await send('not-a-token-of-this-server'), 401, name);
      for (const role of ['producer', 'worker'] as const) {
        const status = await send(TOKENS[role]);
        // These tokens are scoped to acme: what spans every tenant is refused them whatever their role.
        if (SPANS_TENANTS.has(name)) assert.equal(status, 403, `${role}: ${name}`);
        else if (route.access.includes(role)) assert.ok(status !== 401 && status !== 403, `${role}: ${name} answered ${status}`);
        else assert.equal(status, 403, `${role}: ${name}`);
      }
      assert.ok(![401, 403].includes(await send(TOKENS.admin)), `admin: ${name}`);
    }
    assert.equal(await logSize(fixture.log), before, 'requests with an empty body wrote to the log');
  });

  it('without a token or with a wrong one: 401 on every route but the public ones', async (t) => {
    const { call } = await serverOn(t, { authenticator: openAuthenticator(CONFIG) });
    for (const token of [undefined, 'not-a-token-of-this-server']) {
      assertProblem(await call('POST', '/v1/submit', { body: SUBMIT, ...(token ? { token } : {}) }), 401, 'Unauthorized');
      assertProblem(await call('GET', '/v1/now', token ? { token } : {}), 401, 'Unauthorized');
    }
    for (const path of ['/healthz', '/readyz', '/openapi.json']) assert.equal((await call('GET', path)).status, 200, path);
  });
});

describe('server: tenant scope', () => {
  it("a scoped token may not read the queue's metrics (they count every tenant); an unscoped one may", async (t) => {
    const { call } = await serverOn(t, { authenticator: openAuthenticator(CONFIG) });
    for (const token of [TOKENS.producer, TOKENS.worker, TOKENS.scopedAdmin]) {
      assertProblem(await call('GET', '/v1/metrics', { token }), 403, 'Forbidden', /they count every tenant/);
    }
    assert.equal((await call('GET', '/v1/metrics', { token: TOKENS.admin })).status, 200);
  });

  it("another tenant's entry reads exactly as an unknown ticket: entry, cancel, closed, take-entry", async (t) => {
    const fixture = await scopedServer(t);
    const { call, globex } = fixture;
    const id = globex.entryId as string;
    // What the queue answers acme for an id it never issued, of the same shape (a character of the token changed).
    const at = id.indexOf('-') + 3;
    const forged = `${id.slice(0, at)}${id[at] === 'x' ? 'y' : 'x'}${id.slice(at + 1)}`;
    const unknown = await call('GET', `/v1/tenants/acme/entries/${forged}`, { token: TOKENS.producer });
    assertProblem(unknown, 404, 'TicketNotFound');
    const asUnknown = (answer: { status: number; body: { message: string } }) => ({
      ...answer.body,
      message: answer.body.message.replace(id, forged),
    });
    const reads: [string, string, unknown, string][] = [
      ['GET', `/v1/tenants/globex/entries/${id}`, undefined, TOKENS.producer],
      ['POST', `/v1/tenants/globex/entries/${id}/cancel`, { reason: 'x' }, TOKENS.producer],
      ['GET', `/v1/tenants/globex/entries/${id}/closed?waitMs=0`, undefined, TOKENS.producer],
      ['POST', `/v1/tenants/globex/entries/${id}/take`, { holder: 'w', ttlMs: 1000 }, TOKENS.worker],
    ];
    for (const [method, path, body, token] of reads) {
      const answer = await writesNothing(fixture, () => call(method, path, { body, token }));
      assert.equal(answer.status, 404, path);
      assert.deepEqual(asUnknown(answer), unknown.body, path);
    }
    // An id no queue could have issued, or one naming a partition this server does not have (it has 2),
    // reads the same inside and outside the scope.
    for (const made of ['not-an-id', '5-AAAAAAAAAAAAAAAAAAAAAA', '7-12']) {
      for (const [method, path, body, token] of reads) {
        const mine = path.replace('globex', 'acme').replace(id, made);
        const own = await call(method, mine, { body, token });
        const other = await call(method, path.replace(id, made), { body, token });
        assertProblem(own, 404, 'TicketNotFound');
        assert.deepEqual(other.body, own.body, `${method} ${mine}`);
      }
    }
  });

  it("another tenant's thread reads as empty, and deleting it deletes nothing", async (t) => {
    const fixture = await scopedServer(t);
    const open = await fixture.call('GET', '/v1/tenants/globex/threads/order-1/entries', { token: TOKENS.producer });
    assert.deepEqual([open.status, open.body], [200, { entries: [] }]);
    const deleted = await writesNothing(fixture, () =>
      fixture.call('DELETE', '/v1/tenants/globex/threads/order-1', { token: TOKENS.scopedAdmin }),
    );
    assert.deepEqual([deleted.status, deleted.body], [200, { deleted: 0 }]);
    assert.equal((await fixture.local.openEntries('globex', 'order-1')).length, 1, "globex's entry is still open");
  });

  it('a submit for another tenant is 403; for its own, 200', async (t) => {
    const fixture = await scopedServer(t);
    const answer = await writesNothing(fixture, () =>
      fixture.call('POST', '/v1/submit', { body: { ...SUBMIT, tenant: 'globex' }, token: TOKENS.producer }),
    );
    assertProblem(answer, 403, 'Forbidden', /may not submit for tenant "globex"/);
    assert.equal((await fixture.call('POST', '/v1/submit', { body: SUBMIT, token: TOKENS.producer })).status, 200);
  });

  it("another tenant's lease is refused as not current, for every lease call", async (t) => {
    const fixture = await scopedServer(t);
    const lease = fixture.globexLease;
    const calls: [string, unknown][] = [
      ['/v1/leases/extend', { lease, ttlMs: 1000 }],
      ['/v1/leases/start-attempt', { lease, runId: 'r' }],
      ['/v1/leases/yield', { lease, request: { kind: 'defer' } }],
      ['/v1/leases/close', { lease, request: { status: 'succeeded' } }],
    ];
    for (const [path, body] of calls) {
      const answer = await writesNothing(fixture, () => fixture.call('POST', path, { body, token: TOKENS.worker }));
      assertProblem(answer, 409, 'LeaseNotCurrent', /is not current/);
    }
    assert.equal((await fixture.local.entry('globex', lease.entryId)).lease?.epoch, 1, 'the lease is untouched');
  });

  it('a take naming only other tenants is 403; pruning by a scoped admin is 403', async (t) => {
    const fixture = await scopedServer(t);
    const take = await writesNothing(fixture, () =>
      fixture.call('POST', '/v1/take', { body: { ...TAKE, tenants: ['globex'] }, token: TOKENS.worker }),
    );
    assertProblem(take, 403, 'Forbidden', /may take only from its tenants/);
    const prune = await writesNothing(fixture, () =>
      fixture.call('POST', '/v1/prune', { body: { ticketLifetimeMs: 0, limit: 1 }, token: TOKENS.scopedAdmin }),
    );
    assertProblem(prune, 403, 'Forbidden', /may not prune/);
  });

  it('a scoped worker takes only its tenants, long-polling included; next-due looks only at its tenants', async (t) => {
    const fixture = await scopedServer(t);
    const { call, local, clock } = fixture;
    // globex has a takeable head and a delayed one; acme nothing yet.
    await call('POST', '/v1/submit', { body: { ...SUBMIT, tenant: 'globex', thread: 'other' }, token: TOKENS.admin });
    await call('POST', '/v1/submit', {
      body: { ...SUBMIT, tenant: 'globex', thread: 'later', notBefore: clock.nowMs + 500 },
      token: TOKENS.admin,
    });
    assert.deepEqual((await call('POST', '/v1/take', { body: TAKE, token: TOKENS.worker })).body, { taken: null });
    const due = await call('POST', '/v1/next-due', { body: { agents: ['billing'] }, token: TOKENS.worker });
    assert.deepEqual(due.body, { nextDueAt: null });
    // The admin sees globex's: its head takeable now (a time not after now: its submission), before the delayed one.
    assert.deepEqual((await call('POST', '/v1/next-due', { body: { agents: ['billing'] }, token: TOKENS.admin })).body, {
      nextDueAt: clock.nowMs,
    });
    const forbidden = await call('POST', '/v1/next-due', { body: { agents: ['billing'], tenants: ['globex'] }, token: TOKENS.worker });
    assertProblem(forbidden, 403, 'Forbidden');

    const waiting = call('POST', '/v1/take', { body: { ...TAKE, waitMs: 30_000 }, token: TOKENS.worker });
    await call('POST', '/v1/submit', { body: { ...SUBMIT, tenant: 'globex', thread: 'third' }, token: TOKENS.admin });
    const { entryId } = await local.submit({ tenant: 'acme', thread: 'mine', agent: 'billing', input: 'x' });
    const taken = (await waiting).body.taken;
    assert.deepEqual([taken.entry.tenant, taken.entry.entryId], ['acme', entryId]);
    assert.equal((await local.openEntries('globex', 'other'))[0]!.lease, null, "globex's head was not leased");
  });
});
