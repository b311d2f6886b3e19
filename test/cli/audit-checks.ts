/**
 * What the audit commands must answer about audit-scenario.ts's history, whichever log holds
 * it (`at`: the log's flags, --dir DIR or --brokers/--topic). Shared by audit.test.ts (a file
 * log a live writer in another process holds) and audit.kafka.test.ts (the real broker).
 */
import assert from 'node:assert/strict';
import { formatDuration } from '../../src/cli/durations.ts';
import { FAILED_DEADLINE, type Scenario } from './audit-scenario.ts';
import { runCli } from './run-cli.ts';

interface EventLine {
  type: string;
  at: number;
  offset: number;
  partition: number;
  [field: string]: unknown;
}

async function ok(args: string[]): Promise<string> {
  const run = await runCli(args);
  assert.equal(run.code, 0, `runlog ${args.join(' ')}: ${run.stderr}`);
  return run.stdout;
}

function jsonLines<T>(text: string): T[] {
  return text
    .trim()
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as T);
}

/** The failed entry's events, as history --json gives them. */
export async function historyEvents(at: string[], entryId: string): Promise<EventLine[]> {
  return jsonLines<EventLine>(await ok(['history', entryId, ...at, '--json']));
}

export async function checkHistory(at: string[], s: Scenario): Promise<void> {
  const text = await ok(['history', s.failed, ...at]);
  for (const row of [
    /^ticket +\S+$/m,
    /^tenant +acme$/m,
    /^thread +order-1$/m,
    /^agent +mail$/m,
    /^input +"send receipt"$/m,
    /^key +receipt-1$/m,
    /^priority +3$/m,
    /^deadline +2030-01-01 00:00:00\.000 \+00:00$/m,
    /^max attempts +2$/m,
    /^metadata +shop="eu" batch="7"$/m,
    /^why +closed failed after 2 attempts, .* after submission; last error "SMTP 550 no such user"$/m,
  ])
    assert.match(text, row);
  const events = await historyEvents(at, s.failed);
  assert.deepEqual(
    events.map((e) => e.type),
    ['Submitted', 'Leased', 'AttemptStarted', 'Yielded', 'Leased', 'AttemptStarted', 'Closed'],
  );
  assert.equal(events[0]!.deadline, FAILED_DEADLINE);
  // Each event line: date, time and zone, its offset, the time since the one before (from the events' own times).
  const lines = text.split('\n').filter((line) => /^\d{4}-\d\d-\d\d /.test(line));
  assert.equal(lines.length, events.length);
  lines.forEach((line, i) => {
    const gap = formatDuration(i === 0 ? 0 : events[i]!.at - events[i - 1]!.at);
    const date = new Date(events[i]!.at).toISOString();
    const expected = `${date.slice(0, 10)} ${date.slice(11, 23)} +00:00  @${events[i]!.offset} `;
    assert.ok(line.startsWith(expected), `${line} starts with ${expected}`);
    assert.match(line, new RegExp(` \\+${gap.replace('.', '\\.')}  ${events[i]!.type} `));
  });

  assert.equal(await ok(['history', 'acme', s.failed, ...at]), text, 'the tenant given or found: the same trail');
  assert.match(await ok(['history', 'globex', s.failed, ...at]), /^no events of ticket .* for tenant globex/);
  assert.match(await ok(['history', s.succeeded, ...at]), /^why +closed succeeded after 1 attempt, /m);
  assert.match(await ok(['history', s.leased, ...at]), /^why +open, leased by w-pdf \(epoch 1\) until \S+; no attempt started yet$/m);
  assert.match(await ok(['history', s.cancelled, ...at]), /^why +closed cancelled after 0 attempts, .*; reason "customer withdrew"$/m);
  const forged = await runCli(['history', '0-forged', ...at]);
  assert.equal(forged.code, 1, 'a ticket never issued: refused');
  assert.match(forged.stderr, /TicketNotFound/);
  // Shaped as tickets, but never issued: one character of a real one changed (its key never made it), a plain seq
  // past those issued, and one of a partition that issued none yet (as the queue answers: TicketNotFound, not "pruned").
  for (const never of [alteredTicket(s.failed), `${partitionOf(s.failed)}-999999`]) {
    const refused = await runCli(['history', never, ...at]);
    assert.equal(refused.code, 1, `${never}: never issued`);
    assert.match(refused.stderr, /TicketNotFound: .* was never issued/);
    assert.equal(refused.stdout, '');
  }
}

/** `entryId` with one character of its token changed: a ticket of the same shape that its partition's key never made. */
export function alteredTicket(entryId: string): string {
  const at = entryId.indexOf('-') + 5;
  return entryId.slice(0, at) + (entryId[at] === 'A' ? 'B' : 'A') + entryId.slice(at + 1);
}

function partitionOf(entryId: string): number {
  return Number(entryId.slice(0, entryId.indexOf('-')));
}

export async function checkFind(at: string[], s: Scenario): Promise<void> {
  const ids = async (...criteria: string[]): Promise<string[]> =>
    jsonLines<{ entryId: string }>(await ok(['find', ...at, ...criteria, '--json'])).map((found) => found.entryId);
  assert.deepEqual(await ids(), [s.failed, s.succeeded, s.leased, s.cancelled], 'every entry, in submission order');
  assert.deepEqual(await ids('--tenant', 'acme'), [s.failed, s.succeeded]);
  assert.deepEqual(await ids('--thread', 'inv-2'), [s.cancelled]);
  assert.deepEqual(await ids('--key', 'receipt-1'), [s.failed]);
  assert.deepEqual(await ids('--agent', 'pdf'), [s.leased, s.cancelled]);
  assert.deepEqual(await ids('--holder', 'w-pdf'), [s.leased]);
  assert.deepEqual(await ids('--status', 'open'), [s.leased]);
  assert.deepEqual(await ids('--status', 'closed', '--tenant', 'globex'), [s.cancelled]);
  assert.deepEqual(await ids('--outcome', 'failed'), [s.failed]);
  assert.deepEqual(await ids('--outcome', 'expired'), []);
  assert.deepEqual(await ids('--metadata', 'shop=eu', '--metadata', 'batch=7'), [s.failed]);
  assert.deepEqual(await ids('--metadata', 'shop=us'), []);
  assert.deepEqual(await ids('--limit', '2'), [s.failed, s.succeeded]);
  const [failed] = jsonLines<{ submittedAt: number; attempts: number; lastError: string }>(
    await ok(['find', ...at, '--outcome', 'failed', '--json']),
  );
  assert.equal(failed!.attempts, 2);
  assert.equal(failed!.lastError, 'SMTP 550 no such user');
  const [succeeded] = jsonLines<{ submittedAt: number }>(await ok(['find', ...at, '--outcome', 'succeeded', '--json']));
  assert.deepEqual(await ids('--since', String(succeeded!.submittedAt)), [s.succeeded, s.leased, s.cancelled]);
  assert.deepEqual(await ids('--until', String(succeeded!.submittedAt)), [s.failed]);
  const text = await ok(['find', ...at, '--tenant', 'acme']);
  assert.match(
    text,
    new RegExp(
      `^${s.failed}  \\d{4}-\\d\\d-\\d\\d \\S+ \\+00:00  acme/order-1  mail  closed failed  attempts 2/2  key=receipt-1  error="SMTP 550 no such user"$`,
      'm',
    ),
  );
  assert.match(text, /^2 entries$/m);
}

interface EntryJson {
  entryId: string;
  status: string;
  outcome: string | null;
  attempts: unknown[];
  lease: { holder: string } | null;
}

export async function checkState(at: string[], s: Scenario): Promise<void> {
  const events = await historyEvents(at, s.failed);
  const yielded = events.find((e) => e.type === 'Yielded')!;
  const entryAt = async (when: string, ...more: string[]): Promise<EntryJson> =>
    JSON.parse(await ok(['state', ...at, '--at', when, '--entry', s.failed, ...more, '--json'])) as EntryJson;
  // Just after the retry: open, one attempt made, no lease.
  for (const then of [await entryAt(`@${yielded.offset}`, '--partition', String(yielded.partition)), await entryAt(String(yielded.at))]) {
    assert.equal(then.status, 'open');
    assert.equal(then.attempts.length, 1);
    assert.equal(then.lease, null);
  }
  const submitted = await entryAt(`@${events[0]!.offset}`, '--partition', String(events[0]!.partition));
  assert.deepEqual([submitted.status, submitted.attempts.length], ['open', 0]);
  const closed = await entryAt(new Date(events.at(-1)!.at).toISOString());
  assert.deepEqual([closed.status, closed.outcome, closed.attempts.length], ['closed', 'failed', 2]);
  const before = await runCli(['state', ...at, '--at', String(events[0]!.at - 1), '--entry', s.failed]);
  assert.equal(before.code, 1);
  assert.match(before.stderr, /TicketNotFound: the log holds no record of ticket .* up to .*: it was submitted later/);
  const altered = await runCli(['state', ...at, '--at', String(events.at(-1)!.at), '--entry', alteredTicket(s.failed)]);
  assert.equal(altered.code, 1);
  assert.match(altered.stderr, /TicketNotFound: .* was never issued/, 'a ticket no key made is never issued, at any time');
  // --partition naming another partition than the ticket's: a usage error, not "not submitted yet".
  const other = String(1 - events[0]!.partition);
  const elsewhere = await runCli(['state', ...at, '--at', '@0', '--partition', other, '--entry', s.failed]);
  assert.equal(elsewhere.code, 2);
  assert.match(elsewhere.stderr, new RegExp(`lies in partition ${events[0]!.partition}, not in --partition ${other}`));

  // The whole queue: after the retry the failed entry was open; now only the leased one is.
  const queueAt = async (when: string): Promise<{ entries: EntryJson[]; totals: { enqueued: number; failed: number } }> =>
    JSON.parse(await ok(['state', ...at, '--at', when, '--json']));
  const then = await queueAt(String(yielded.at));
  assert.deepEqual(
    then.entries.map((e) => e.entryId),
    [s.failed],
  );
  assert.deepEqual([then.totals.enqueued, then.totals.failed], [1, 0]);
  const now = await queueAt(String(Date.now()));
  assert.deepEqual(
    now.entries.map((e) => [e.entryId, e.lease?.holder]),
    [[s.leased, 'w-pdf']],
  );
  assert.deepEqual([now.totals.enqueued, now.totals.failed], [4, 1]);
  const text = await ok(['state', ...at, '--at', String(Date.now()), '--tenant', 'globex']);
  assert.match(text, /^globex\/inv-1:\n {2}\S+ .* pdf {2}leased by w-pdf {2}attempts 0\/10/m);
}

export async function checkTail(at: string[], s: Scenario): Promise<void> {
  const tailed = async (...filters: string[]): Promise<[string, string][]> =>
    jsonLines<EventLine>(await ok(['tail', ...at, '--from', 'start', '--json', ...filters]))
      .map((e): [string, string] => [e.type, String(e.entryId)])
      .sort();
  assert.deepEqual(
    await tailed('--agent', 'pdf', '--limit', '4'),
    [
      ['CancelRequested', s.cancelled],
      ['Leased', s.leased],
      ['Submitted', s.cancelled],
      ['Submitted', s.leased],
    ].sort(),
  );
  assert.deepEqual(
    await tailed('--type', 'Closed', '--type', 'Yielded', '--limit', '3'),
    [
      ['Closed', s.failed],
      ['Closed', s.succeeded],
      ['Yielded', s.failed],
    ].sort(),
  );
  assert.deepEqual(await tailed('--agent', 'mail', '--type', 'AttemptStarted', '--limit', '2'), [
    ['AttemptStarted', s.failed],
    ['AttemptStarted', s.failed],
  ]);
}
