/**
 * The console's read endpoints over a real server (a memory log, a fake store clock): an
 * entry's history, each agent's backlog and rates, and the console's files. Scoped tokens see
 * only their tenants; another tenant's entry answers as an unknown one.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { openAuthenticator } from '../../src/server/auth.ts';
import { CONSOLE_FILES } from '../../src/server/console-files.ts';
import { assertProblem, serverOn, TAKE } from './fixtures.ts';

const LIB = { tenant: 'acme', thread: 'order-1', agent: 'billing', input: 'hello' };

const TOKENS = [
  { name: 'admin', token: 'admin-token-0123456789', tenants: '*' as const, roles: ['admin' as const] },
  { name: 'acme', token: 'acme-token-0123456789', tenants: ['acme'], roles: ['producer' as const] },
  { name: 'beta', token: 'beta-token-0123456789', tenants: ['beta'], roles: ['worker' as const] },
];

describe('server: the console read endpoints', () => {
  it("history: an entry's events in log order with the entry now, for its tenant's tokens only", async (t) => {
    const { call, queue, clock } = await serverOn(t, { authenticator: openAuthenticator(TOKENS) });
    const { entryId } = await queue.submit({ ...LIB, maxAttempts: 3 });
    await queue.submit({ ...LIB, thread: 'other' });
    clock.advance(1_000);
    const first = (await queue.take(TAKE))!;
    await queue.startAttempt(first.lease, 'run-1');
    clock.advance(250);
    await queue.yield(first.lease, { kind: 'retry', error: 'card declined' });
    const second = (await queue.takeEntry('acme', entryId, { holder: 'w2', ttlMs: 30_000 }))!;
    await queue.startAttempt(second.lease, 'run-2');
    await queue.close(second.lease, { status: 'succeeded', result: 'charged' });

    const path = `/v1/tenants/acme/entries/${entryId}/history`;
    const answer = await call('GET', path, { token: TOKENS[1]!.token });
    assert.equal(answer.status, 200);
    const { entry, events } = answer.body;
    assert.deepEqual(
      events.map((event: { type: string }) => event.type),
      ['Submitted', 'Leased', 'AttemptStarted', 'Yielded', 'Leased', 'AttemptStarted', 'Closed'],
    );
    assert.ok(events.every((event: { entryId: string; partition: number }) => event.entryId === entryId));
    const offsets = events.map((event: { offset: number }) => event.offset);
    assert.deepEqual(
      offsets,
      [...offsets].sort((a, b) => a - b),
      'in log order',
    );
    assert.deepEqual([events[0].at, events[1].at, events[3].at], [clock.nowMs - 1_250, clock.nowMs - 250, clock.nowMs]);
    assert.deepEqual(
      events.map((event: { sincePreviousMs: number | null }) => event.sincePreviousMs),
      [null, 1_000, 0, 250, 0, 0, 0],
    );
    assert.equal(events[3].error, 'card declined');
    assert.equal(Buffer.from(events[0].input, 'base64').toString(), 'hello');
    assert.deepEqual([entry.status, entry.outcome, entry.attempts.length], ['closed', 'succeeded', 2]);

    // The admin reads it too; another tenant's token gets what a ticket never issued gets.
    assert.equal((await call('GET', path, { token: TOKENS[0]!.token })).status, 200);
    const hidden = await call('GET', path, { token: TOKENS[2]!.token });
    assertProblem(hidden, 404, 'TicketNotFound', new RegExp(`^ticket "${entryId}" was never issued$`));
    const madeUp = await call('GET', `/v1/tenants/acme/entries/${entryId.slice(0, -4)}AAAA/history`, { token: TOKENS[1]!.token });
    assertProblem(madeUp, 404, 'TicketNotFound');
    // The right ticket named under another tenant the token may see reads as the queue answers it.
    const wrongTenant = await call('GET', `/v1/tenants/beta/entries/${entryId}/history`, { token: TOKENS[0]!.token });
    assert.equal(wrongTenant.status, 410);
    assert.equal(wrongTenant.body.code, 'TicketExpired');
    assertProblem(await call('GET', path), 401, 'Unauthorized');
  });

  it('history of a pruned entry: its events while the log keeps them, entry null', async (t) => {
    const { call, queue, clock } = await serverOn(t);
    const { entryId } = await queue.submit(LIB);
    const taken = (await queue.take(TAKE))!;
    await queue.close(taken.lease, { status: 'failed', error: 'boom' });
    clock.advance(10_000);
    assert.equal(await queue.prune(1_000, 10), 1);
    const answer = await call('GET', `/v1/tenants/acme/entries/${entryId}/history`);
    assert.equal(answer.status, 200);
    assert.equal(answer.body.entry, null);
    assert.deepEqual(
      answer.body.events.map((event: { type: string }) => event.type),
      ['Submitted', 'Leased', 'Closed', 'EntriesPruned'],
    );
  });

  it("agents: each agent's backlog now and its counts over the last minutes, over the token's tenants", async (t) => {
    const { call, queue, clock } = await serverOn(t, { authenticator: openAuthenticator(TOKENS) });
    const agents = async (token: string, query = ''): Promise<any> => {
      const answer = await call('GET', `/v1/agents${query}`, { token });
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      return answer.body;
    };
    assert.deepEqual((await agents(TOKENS[0]!.token)).agents, [], 'nothing yet');

    const submittedAt = clock.nowMs;
    await queue.submit({ ...LIB, thread: 'a' });
    await queue.submit({ ...LIB, thread: 'b' });
    await queue.submit({ ...LIB, thread: 'c', agent: 'mail' });
    await queue.submit({ tenant: 'beta', thread: 'a', agent: 'billing', input: 'x' });
    clock.advance(5 * 60_000);
    const running = (await queue.take({ ...TAKE, tenants: ['acme'] }))!;
    await queue.startAttempt(running.lease, 'run-1');
    const failing = (await queue.take({ ...TAKE, tenants: ['acme'] }))!;
    await queue.close(failing.lease, { status: 'failed', error: 'no' });

    const all = await agents(TOKENS[0]!.token, '?minutes=1');
    assert.equal(all.now, clock.nowMs);
    assert.equal(all.minutes, 1);
    const billing = all.agents.find((row: { agent: string }) => row.agent === 'billing');
    // Over both tenants: 3 billing entries, one closed, one running, one waiting (beta's, submitted 5 minutes ago).
    assert.deepEqual(
      [billing.open, billing.running, billing.waiting, billing.oldestWaitingAt, billing.submitted, billing.started, billing.failed],
      [2, 1, 1, submittedAt, 0, 1, 1],
    );
    const longer = await agents(TOKENS[0]!.token, '?minutes=10');
    assert.equal(longer.agents.find((row: { agent: string }) => row.agent === 'billing').submitted, 3);

    const acme = await agents(TOKENS[1]!.token, '?minutes=10');
    assert.deepEqual(
      acme.agents.map((row: any) => [row.agent, row.open, row.submitted]),
      [
        ['billing', 1, 2],
        ['mail', 1, 1],
      ],
    );
    // A scoped token naming another tenant sees nothing of it; the admin may filter by tenant.
    assert.deepEqual((await agents(TOKENS[1]!.token, '?tenant=beta')).agents, []);
    const beta = await agents(TOKENS[0]!.token, '?tenant=beta&minutes=10');
    assert.deepEqual(
      beta.agents.map((row: any) => [row.agent, row.open, row.waiting, row.submitted]),
      [['billing', 1, 1, 1]],
    );

    // The lease runs out by the store clock: the entry waits again.
    clock.advance(31_000);
    const later = (await agents(TOKENS[1]!.token)).agents.find((row: { agent: string }) => row.agent === 'billing');
    assert.deepEqual([later.running, later.waiting], [0, 1]);
  });

  it('agents: a cancelled entry and the entries of a deleted thread are closed, counted as such (before: open and waiting)', async (t) => {
    const { call, queue } = await serverOn(t, { authenticator: openAuthenticator(TOKENS) });
    const cancelled = await queue.submit({ ...LIB, thread: 'a' });
    await queue.submit({ ...LIB, thread: 'b' });
    await queue.submit({ ...LIB, thread: 'b' });
    await queue.submit({ ...LIB, thread: 'c' });
    await queue.cancel('acme', cancelled.entryId, 'not wanted');
    await queue.deleteThread('acme', 'b');
    const answer = await call('GET', '/v1/agents', { token: TOKENS[1]!.token });
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    const billing = answer.body.agents.find((row: { agent: string }) => row.agent === 'billing');
    assert.deepEqual([billing.open, billing.waiting, billing.submitted, billing.cancelled, billing.threadDeleted], [1, 1, 4, 1, 2]);
    assert.equal((await queue.metrics()).open, 1, 'as the queue counts them');
  });

  it('serves the console page and its files, with a strict content security policy, and nothing else', async (t) => {
    const { server } = await serverOn(t, { authenticator: openAuthenticator(TOKENS) });
    const page = await fetch(`${server.url}/console`);
    assert.equal(page.status, 200);
    assert.equal(page.headers.get('content-type'), 'text/html; charset=utf-8');
    assert.match(page.headers.get('content-security-policy')!, /script-src 'self'/);
    assert.equal(page.headers.get('x-content-type-options'), 'nosniff');
    const html = await page.text();
    assert.match(html, /<script type="module" src="\/console\/main.js"><\/script>/);
    for (const file of CONSOLE_FILES.filter((name) => name !== 'index.html')) {
      const answer = await fetch(`${server.url}/console/${file}`);
      assert.equal(answer.status, 200, file);
      assert.equal(
        answer.headers.get('content-type'),
        file.endsWith('.css') ? 'text/css; charset=utf-8' : 'text/javascript; charset=utf-8',
      );
      assert.ok((await answer.text()).length > 100, file);
      // Every module the page imports is one the server serves.
      if (file.endsWith('.js')) {
        const source = await (await fetch(`${server.url}/console/${file}`)).text();
        for (const [, imported] of source.matchAll(/from '\.\/([\w-]+\.js)'/g)) assert.ok(CONSOLE_FILES.includes(imported!), imported);
      }
    }
    for (const name of ['index.html', 'nope.js', '..%2Fconsole-files.ts', '%2E%2E', 'console.js']) {
      const answer = await fetch(`${server.url}/console/${name}`);
      assert.equal(answer.status, 404, name);
      assert.equal(((await answer.json()) as { code: string }).code, 'InvalidArgument');
    }
  });
});
