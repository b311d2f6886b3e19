/**
 * The web console in a real headless browser: Debian's Chromium (/usr/bin/chromium, or
 * RUNLOG_CHROMIUM), driven by playwright-core, against a real `runlog serve` child process on
 * loopback with a file log and tokens. The page takes its token from the URL fragment; we find
 * a ticket and read its timeline (attempts, the error, the time between events), a thread's open
 * entries, the agents' backlog (and a new count arriving as the panel refreshes on its own), and
 * watch a live event arrive; and the agents' backlog of a partition whose time runs ahead of
 * store time (stamped by a node whose clock ran ahead). Screenshots go to the test's
 * scratch directory (copied to RUNLOG_SCREENSHOTS when set); what they show is checked through
 * the page's DOM.
 */
import assert from 'node:assert/strict';
import { cp, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { chromium, type Browser, type Page } from 'playwright-core';
import { connect } from '../../src/client/index.ts';
import { openRunQueue } from '../../src/queue/open-run-queue.ts';
import { FakeClock } from '../contract/fixtures.ts';
import { HOUR, PARTITIONS, threadOn } from '../support/acquired-ahead.ts';
import { onCleanup, scratchDir } from '../support/cleanup.ts';
import { spawnServe } from './serve-child.ts';

const CHROMIUM = process.env.RUNLOG_CHROMIUM ?? '/usr/bin/chromium';
const ADMIN = 'console-admin-0123456789';
const PRODUCER = 'acme-producer-0123456789';
const TOKENS = [
  { name: 'console-admin', token: ADMIN, tenants: '*', roles: ['admin'] },
  { name: 'acme-producer', token: PRODUCER, tenants: ['acme'], roles: ['producer'] },
];

async function launch(): Promise<Browser> {
  try {
    return await chromium.launch({ executablePath: CHROMIUM, headless: true });
  } catch (error) {
    throw new Error(`the console test needs Chromium at ${CHROMIUM} (Debian: apt-get install -y chromium): ${String(error)}`);
  }
}

/** The texts of a table's body rows, cell by cell. */
function cells(page: Page, selector: string): Promise<string[][]> {
  return page.$$eval(`${selector} tbody tr`, (rows) => rows.map((row) => [...row.children].map((cell) => cell.textContent ?? '')));
}

/**
 * Waits until the element's text is `text` (or matches it). Playwright's text selectors, not
 * waitForFunction: the page's content security policy forbids the eval that one polls with.
 */
async function untilText(page: Page, selector: string, text: string | RegExp): Promise<void> {
  const pseudo = typeof text === 'string' ? `:text-is(${JSON.stringify(text)})` : `:text-matches(${JSON.stringify(text.source)})`;
  await page.waitForSelector(`${selector}${pseudo}`);
}

async function screenshot(page: Page, dir: string, name: string): Promise<void> {
  const file = join(dir, name);
  await page.screenshot({ path: file, fullPage: true });
  const png = await readFile(file);
  assert.deepEqual([...png.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], `${name} is a PNG`);
  if (process.env.RUNLOG_SCREENSHOTS) await cp(file, join(process.env.RUNLOG_SCREENSHOTS, name));
}

describe('the web console in headless Chromium', () => {
  it('finds a ticket, shows its timeline, a thread, the agents, and a live event as it arrives', async (t) => {
    const dir = await scratchDir(t, 'runlog-console-');
    await writeFile(join(dir, 'tokens.json'), JSON.stringify(TOKENS));
    const serve = spawnServe(t, ['--dir', join(dir, 'data'), '--port', '0', '--host', '127.0.0.1', '--tokens', join(dir, 'tokens.json')]);
    const { url } = await serve.started();
    const queue = await connect({ url, token: ADMIN });
    onCleanup(t, () => queue.stop());

    // A ticket that failed once, then succeeded; the next one of its thread waits; another agent's runs.
    const { entryId } = await queue.submit({ tenant: 'acme', thread: 'order-7', agent: 'billing', input: 'charge 42', maxAttempts: 3 });
    const first = (await queue.take({ agents: ['billing'], holder: 'worker-a', ttlMs: 60_000 }))!;
    await queue.startAttempt(first.lease, 'run-1');
    await queue.yield(first.lease, { kind: 'retry', error: 'card declined' });
    const second = (await queue.takeEntry('acme', entryId, { holder: 'worker-b', ttlMs: 60_000 }))!;
    await queue.startAttempt(second.lease, 'run-2');
    await queue.close(second.lease, { status: 'succeeded', result: 'charged' });
    const waiting = await queue.submit({ tenant: 'acme', thread: 'order-7', agent: 'billing', input: 'refund 5' });
    await queue.submit({ tenant: 'acme', thread: 'user-3', agent: 'mail', input: 'welcome' });
    await queue.take({ agents: ['mail'], holder: 'worker-c', ttlMs: 600_000 });

    const browser = await launch();
    onCleanup(t, () => browser.close());
    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    const pageErrors: string[] = [];
    page.on('pageerror', (error) => pageErrors.push(error.message));
    await page.goto(`${url}/console#token=${ADMIN}`);
    assert.equal(await page.textContent('#token-state'), 'token set');
    assert.equal(new URL(page.url()).hash, '', 'the token is taken out of the address bar');

    // Find the ticket: its timeline, in order, with its attempts, its error and the time between events.
    await page.fill('#ticket-tenant', 'acme');
    await page.fill('#ticket-id', entryId);
    await page.click('#find-ticket');
    await page.waitForSelector('#timeline tbody tr[data-type="Closed"]');
    const timeline = await cells(page, '#timeline');
    assert.deepEqual(
      timeline.map((row) => row[3]),
      ['Submitted', 'Leased', 'AttemptStarted', 'Yielded', 'Leased', 'AttemptStarted', 'Closed'],
    );
    assert.match(timeline[0]![4]!, /agent billing · input "charge 42" · max 3 attempts/);
    assert.match(timeline[2]![4]!, /^attempt 1 · run run-1$/);
    assert.match(timeline[3]![4]!, /^retry · error "card declined"/);
    assert.match(timeline[5]![4]!, /^attempt 2 · run run-2$/);
    assert.match(timeline[6]![4]!, /^succeeded · result "charged"$/);
    assert.equal(timeline[0]![1], '', 'the first event follows none');
    for (const row of timeline.slice(1))
      assert.match(row[1]!, /^\+\d+(\.\d)? (ms|s)$|^\+\d+ (min|h) /, 'the time since the previous event');
    for (const row of timeline) assert.match(row[0]!, /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}$/);
    const errors = await page.$$eval('#timeline tbody tr.error', (rows) => rows.map((row) => row.getAttribute('data-type')));
    assert.deepEqual(errors, ['Yielded'], 'the row with the error is marked');
    const summary = await page.textContent('#ticket-summary');
    assert.match(summary!, /statusclosed, succeeded/);
    assert.match(summary!, /attempts2 of 3/);
    await screenshot(page, dir, 'timeline.png');

    // The thread's open entries; its ticket opens its own timeline.
    await page.fill('#thread-tenant', 'acme');
    await page.fill('#thread-name', 'order-7');
    await page.click('#find-thread');
    await page.waitForSelector(`#thread-entries tbody tr[data-entry="${waiting.entryId}"]`);
    assert.deepEqual(await cells(page, '#thread-entries'), [
      [waiting.entryId, 'billing', 'waiting', '0', (await cells(page, '#thread-entries'))[0]![4]!],
    ]);
    await page.click(`#thread-entries tbody tr[data-entry="${waiting.entryId}"] button`);
    await untilText(page, '#ticket-summary dd', waiting.entryId);
    await page.waitForSelector('#timeline tbody tr:only-child[data-type="Submitted"]');

    // Each agent's backlog and counts over the last hour.
    await page.fill('#agents-minutes', '60');
    await page.click('#agents-refresh');
    // The table as the last hour's answer shows it (the refreshes of the 5 minutes before may have shown it first).
    await page.waitForSelector('#agents[data-minutes="60"] tbody tr[data-agent="mail"]');
    const agents = Object.fromEntries((await cells(page, '#agents')).map((row) => [row[0], row.slice(1)]));
    // open, running, waiting, oldest waiting, submitted, started, retried, succeeded, failed, other closes, closed/min
    assert.deepEqual(agents.billing!.slice(0, 3), ['1', '0', '1']);
    assert.deepEqual(agents.billing!.slice(4), ['2', '2', '1', '1', '0', '0', '0.02']);
    assert.deepEqual(agents.mail!.slice(0, 3), ['1', '1', '0']);
    assert.equal(agents.mail![3], '', 'nothing of mail waits');
    assert.match((await page.textContent('#agents-updated'))!, /^as of \d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} UTC · refreshes every \d+ s$/);
    await screenshot(page, dir, 'agents.png');
    // The panel refreshes on its own: a new mail entry's count arrives with nothing clicked.
    await queue.submit({ tenant: 'acme', thread: 'user-4', agent: 'mail', input: 'hello again' });
    const mail = '#agents tbody tr[data-agent="mail"]';
    await untilText(page, `${mail} td:nth-child(6)`, '2'); // submitted
    assert.deepEqual((await cells(page, '#agents')).find((row) => row[0] === 'mail')!.slice(1, 4), ['2', '1', '1']);
    await screenshot(page, dir, 'agents-refreshed.png');

    // The live stream: once connected, an event appended now arrives on the page.
    await page.click('#live-toggle');
    await untilText(page, '#live-state', 'live');
    const fresh = await queue.submit({ tenant: 'acme', thread: 'order-9', agent: 'billing', input: 'charge 7' });
    const arrived = `#live tbody tr[data-entry="${fresh.entryId}"][data-type="Submitted"]`;
    await page.waitForSelector(arrived);
    assert.deepEqual((await cells(page, '#live'))[0]!.slice(1, 5), ['Submitted', 'acme', 'order-9', fresh.entryId]);
    await screenshot(page, dir, 'live.png');
    // Its ticket opens its timeline.
    await page.click(`${arrived} button`);
    await untilText(page, '#ticket-summary dd', fresh.entryId);
    await page.waitForSelector('#timeline tbody tr:only-child[data-type="Submitted"]');
    await page.click('#live-toggle');
    await untilText(page, '#live-state', 'stopped');
    assert.deepEqual(pageErrors, []);

    // A producer's token, in a link naming a ticket: its tenant's timeline opens; the event stream
    // (admins only) is refused, and the page says so.
    const producer = await browser.newPage();
    await producer.goto(`${url}/console#token=${PRODUCER}&tenant=acme&ticket=${entryId}`);
    await producer.waitForSelector('#timeline tbody tr[data-type="Closed"]');
    assert.equal(await producer.$$eval('#timeline tbody tr', (rows) => rows.length), 7);
    assert.equal(new URL(producer.url()).hash, '');
    await producer.click('#live-toggle');
    await untilText(producer, '#live-state', /^Forbidden: /);
    // No token: every call is refused, and the page says so.
    const anonymous = await browser.newPage();
    await anonymous.goto(`${url}/console`);
    assert.equal(await anonymous.textContent('#token-state'), 'no token');
    await anonymous.fill('#ticket-tenant', 'acme');
    await anonymous.fill('#ticket-id', entryId);
    await anonymous.click('#find-ticket');
    await untilText(anonymous, '#ticket-message', /./);
    assert.equal(
      await anonymous.textContent('#ticket-message'),
      'Unauthorized: a valid bearer token is required (authorization: Bearer <token>)',
    );
    assert.equal(await anonymous.$$eval('#timeline tbody tr', (rows) => rows.length), 0);
  });

  it("shows a partition's leases and waits in its own time when it runs ahead of store time (partition-lead.ts)", async (t) => {
    const dir = await scratchDir(t, 'runlog-console-lead-');
    const data = join(dir, 'data');
    await writeFile(join(dir, 'tokens.json'), JSON.stringify(TOKENS));
    // Partition 0 stamped by a node an hour ahead: an entry leased for a minute, and two minutes
    // later another submitted; so in partition 0's time the lease ran out a minute ago.
    const ahead = new FakeClock(Date.now() + HOUR);
    const fast = await openRunQueue({ log: { kind: 'file', dir: data }, partitions: PARTITIONS, clock: ahead.read, ownership: 'assigned' });
    await fast.acquire(0);
    await fast.submit({ tenant: 'acme', thread: threadOn(0), agent: 'ahead', input: 'first' });
    assert.ok((await fast.take({ agents: ['ahead'], holder: 'worker-a', ttlMs: 60_000 })) !== null);
    ahead.advance(120_000);
    await fast.submit({ tenant: 'acme', thread: threadOn(0), agent: 'ahead', input: 'second' });
    await fast.stop();
    // Partition 1 by a node in step with this host.
    const inStep = await openRunQueue({ log: { kind: 'file', dir: data }, ownership: 'assigned' });
    await inStep.acquire(1);
    await inStep.submit({ tenant: 'acme', thread: threadOn(1), agent: 'here', input: 'now' });
    await inStep.stop();

    const serve = spawnServe(t, ['--dir', data, '--port', '0', '--host', '127.0.0.1', '--tokens', join(dir, 'tokens.json')]);
    const { url } = await serve.started();
    const browser = await launch();
    onCleanup(t, () => browser.close());
    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    await page.goto(`${url}/console#token=${ADMIN}`);
    await page.fill('#agents-minutes', '60');
    await page.click('#agents-refresh');
    await page.waitForSelector('#agents tbody tr[data-agent="ahead"]');
    const agents = Object.fromEntries((await cells(page, '#agents')).map((row) => [row[0], row.slice(1)]));
    // open, running, waiting, oldest waiting: the first entry's lease ran out a minute ago in its partition's time.
    assert.deepEqual(agents.ahead!.slice(0, 3), ['2', '0', '2'], `the expired lease shows as running: ${JSON.stringify(agents.ahead)}`);
    assert.match(agents.ahead![3]!, /^2 min \d+ s$/, "the oldest waits since two minutes in its partition's time");
    await screenshot(page, dir, 'agents-lead.png');
  });
});
