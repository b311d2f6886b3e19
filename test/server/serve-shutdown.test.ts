/**
 * SIGTERM on a real `runlog serve` child under load: producers submitting and workers taking
 * (long-polls) and closing, over HTTP with plain fetch, all at once; the signal is sent while
 * their requests are in flight. The child must exit 0, and the log, reopened once it has
 * exited, must show:
 *   - every submit answered 200: its entry is in the log (nothing acknowledged is lost);
 *   - every close answered 200: its entry is closed, succeeded;
 *   - every lease a take answered: in the log as answered (holder, epoch, expiry), or closed;
 *   - every lease in the log on an open entry: one a take answered to a worker. So the
 *     shutdown granted no lease that nobody heard of (a take long-poll the shutdown ended
 *     answered null and leased nothing); what a worker holds is exactly what it was told,
 *     and it lapses at the expiry it was told (ttlMs after the grant), as any lease does.
 * Long-polls and event streams in flight when the signal comes end with their "nothing"
 * answers, and the child still exits 0. A second signal during the shutdown forces exit code 1.
 */
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { openRunQueue } from '../../src/queue/open-run-queue.ts';
import type { Lease } from '../../src/queue/types.ts';
import { onCleanup, scratchDir } from '../support/cleanup.ts';
import { spawnServe } from './serve-child.ts';

const TTL_MS = 60_000;

interface Tally {
  tickets: { tenant: string; thread: string; entryId: string }[];
  leases: Map<string, Lease & { expiresAt: number }>;
  closed: Set<string>;
  inFlight: number;
  signalled: boolean;
  inFlightAtSignal: number;
}

/** POSTs JSON; 'gone' when the server is no longer there (connection refused or reset) or refuses as Stopped. */
async function post(url: string, path: string, body: unknown, tally: Tally): Promise<Record<string, unknown> | 'gone'> {
  tally.inFlight += 1;
  try {
    const response = await fetch(`${url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const answer = (await response.json()) as Record<string, unknown>;
    if (response.status === 503 && answer.code === 'Stopped') return 'gone';
    assert.equal(response.status, 200, `${path}: ${JSON.stringify(answer)}`);
    return answer;
  } catch (error) {
    if (error instanceof TypeError && error.message === 'fetch failed') return 'gone';
    throw error;
  } finally {
    tally.inFlight -= 1;
  }
}

async function produce(url: string, producer: number, tally: Tally): Promise<void> {
  for (let n = 0; ; n++) {
    const request = { tenant: 'acme', thread: `p${producer}-${n % 16}`, agent: 'billing', inputText: `order ${producer}-${n}` };
    const ticket = await post(url, '/v1/submit', request, tally);
    if (ticket === 'gone') return;
    tally.tickets.push({ tenant: 'acme', thread: request.thread, entryId: String(ticket.entryId) });
  }
}

async function work(url: string, holder: string, tally: Tally): Promise<void> {
  for (;;) {
    const answer = await post(url, '/v1/take', { agents: ['billing'], holder, ttlMs: TTL_MS, waitMs: 500 }, tally);
    if (answer === 'gone') return;
    const taken = answer.taken as { lease: Lease & { expiresAt: number } } | null;
    if (taken === null) continue;
    tally.leases.set(taken.lease.entryId, taken.lease);
    const closed = await post(url, '/v1/leases/close', { lease: taken.lease, request: { status: 'succeeded', resultText: 'done' } }, tally);
    if (closed === 'gone') return;
    tally.closed.add(taken.lease.entryId);
  }
}

function newTally(): Tally {
  return { tickets: [], leases: new Map(), closed: new Set(), inFlight: 0, signalled: false, inFlightAtSignal: 0 };
}

describe('runlog serve: shutdown', () => {
  it('SIGTERM under load: exits 0, loses no acknowledged submit, leaves no lease nobody was told of', async (t) => {
    const dir = await scratchDir(t, 'runlog-serve-sigterm-');
    const data = join(dir, 'data');
    const serve = spawnServe(t, ['--dir', data, '--port', '0', '--host', '127.0.0.1']);
    const { url } = await serve.started();
    const tally = newTally();
    const loops = [
      ...Array.from({ length: 4 }, (_, i) => produce(url, i, tally)),
      ...Array.from({ length: 3 }, (_, i) => work(url, `worker-${i}`, tally)),
    ];
    while (tally.tickets.length < 200 || tally.closed.size < 40) await delay(5);
    tally.inFlightAtSignal = tally.inFlight;
    serve.child.kill('SIGTERM');
    await Promise.all(loops);
    assert.deepEqual(await serve.exited, { code: 0, signal: null }, serve.stderr());
    assert.ok(tally.inFlightAtSignal > 0, 'requests were in flight when the signal came');
    assert.deepEqual(
      serve.records.filter((r) => String(r.event).startsWith('serve.')).map((r) => [r.event, r.signal]),
      [
        ['serve.loopback-only', undefined],
        ['serve.listening', undefined],
        ['serve.stopping', 'SIGTERM'],
        ['serve.stopped', undefined],
      ],
    );

    const queue = await openRunQueue({ log: { kind: 'file', dir: data } });
    onCleanup(t, () => queue.stop());
    for (const { tenant, thread, entryId } of tally.tickets) {
      const entry = await queue.entry(tenant, entryId);
      assert.equal(entry.thread, thread);
    }
    for (const entryId of tally.closed) assert.equal((await queue.entry('acme', entryId)).outcome, 'succeeded');
    const leasedOpen: string[] = [];
    for (const [entryId, told] of tally.leases) {
      const entry = await queue.entry('acme', entryId);
      if (entry.status === 'closed') continue;
      leasedOpen.push(entryId);
      assert.deepEqual(entry.lease, told, `the lease of ${entryId} in the log is the one its worker was told`);
    }
    // The view holds open entries whole; closed ones are rows of its ticket index (closed.size).
    const view = queue.views()[0]!;
    const entryIds = [...view.entries.keys()];
    assert.ok(entryIds.length + view.closed.size >= tally.tickets.length);
    for (const entryId of entryIds) {
      const entry = await queue.entry('acme', entryId);
      if (entry.status === 'open' && entry.lease !== null)
        assert.deepEqual(entry.lease, tally.leases.get(entryId), `entry ${entryId} holds a lease no worker was told of`);
    }
    t.diagnostic(
      `${tally.tickets.length} submits acknowledged (${entryIds.length + view.closed.size} entries in the log), ${tally.closed.size} closes, ` +
        `${leasedOpen.length} taken and not closed (lease in the log as told), ${tally.inFlightAtSignal} requests in flight at SIGTERM`,
    );
  });

  it('SIGTERM ends the long-polls and event streams in flight with their nothing answers, then exits 0', async (t) => {
    const dir = await scratchDir(t, 'runlog-serve-streams-');
    const serve = spawnServe(t, ['--dir', join(dir, 'data'), '--port', '0', '--host', '127.0.0.1']);
    const { url } = await serve.started();
    const ticket = await post(url, '/v1/submit', { tenant: 'acme', thread: 'slow', agent: 'nobody', inputText: 'x' }, newTally());
    assert.notEqual(ticket, 'gone');
    const entryId = String((ticket as Record<string, unknown>).entryId);
    // Each waits far longer than the test runs: only the shutdown can end it.
    const closed = fetch(`${url}/v1/tenants/acme/entries/${entryId}/closed?waitMs=60000`);
    const take = fetch(`${url}/v1/take`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ agents: ['billing'], holder: 'w', ttlMs: 30_000, waitMs: 60_000 }),
    });
    const streams = await Promise.all([fetch(`${url}/v1/work`), fetch(`${url}/v1/events?from=0`)]);
    assert.deepEqual(
      streams.map((stream) => [stream.status, stream.headers.get('content-type')?.split(';')[0]]),
      [
        [200, 'text/event-stream'],
        [200, 'text/event-stream'],
      ],
    );
    // The events stream has sent the Submitted event: the server is past the headers of every request above.
    const events = streams[1]!.body!.getReader();
    let received = '';
    while (!received.includes('event: Submitted')) {
      const { done, value } = await events.read();
      assert.ok(!done, `the event stream ended before the Submitted event: ${received}`);
      received += new TextDecoder().decode(value);
    }
    serve.child.kill('SIGTERM');
    const answers = await Promise.all([closed, take]);
    assert.deepEqual(await Promise.all(answers.map((answer) => answer.json())), [{ entry: null }, { taken: null }]);
    for (const reader of [streams[0]!.body!.getReader(), events]) {
      while (!(await reader.read()).done);
    }
    assert.deepEqual(await serve.exited, { code: 0, signal: null }, serve.stderr());
  });

  it('a second signal during the shutdown forces exit 1', async (t) => {
    const dir = await scratchDir(t, 'runlog-serve-forced-');
    const serve = spawnServe(t, ['--dir', join(dir, 'data'), '--port', '0', '--host', '127.0.0.1']);
    const { port } = await serve.started();
    // A request in flight that never completes: its body is promised and never sent, so the graceful shutdown waits for it.
    const socket = connect({ host: '127.0.0.1', port });
    onCleanup(t, () => socket.destroy());
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.write('POST /v1/submit HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{"tenant":');
    // A round trip on another connection after the write: the server has read the headers above by then (one event loop, bytes sent first).
    assert.equal((await fetch(`http://127.0.0.1:${port}/v1/now`)).status, 200);
    serve.child.kill('SIGTERM');
    while (!serve.records.some((r) => r.event === 'serve.stopping')) await delay(5);
    serve.child.kill('SIGINT');
    assert.deepEqual(await serve.exited, { code: 1, signal: null });
    const forced = serve.records.find((r) => r.event === 'serve.forced');
    assert.deepEqual([forced?.level, forced?.signal], ['error', 'SIGINT']);
    assert.ok(!serve.records.some((r) => r.event === 'serve.stopped'));
  });
});
