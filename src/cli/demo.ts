/**
 * `npm start`: runlog end to end on the embedded file log in ./data.
 *
 * Each run opens the queue (which replays the log), says what it found from earlier runs,
 * then plays one round: producers submit work on a few threads of two tenants, three workers
 * take, start attempts and close (one job fails once and is retried), and it prints each
 * entry's audit trail as read back from the log, and the metrics. Run it twice to see the
 * second run rebuild its state from the log. `rm -rf data` starts over.
 */
import { type RunQueue } from '../queue/run-queue.ts';
import { openRunQueue } from '../queue/open-run-queue.ts';
import type { Entry, Lease, QueueMetrics, SubmitRequest } from '../queue/types.ts';
import { sleep } from '../retry.ts';
import { entryHistory, formatHistoryItem } from './history.ts';
import { randomUUID } from 'node:crypto';

const DIR = process.env.RUNLOG_DEMO_DIR ?? './data';
const PARTITIONS = 8;
const AGENTS = ['billing', 'mail', 'pdf'];
const WORKERS = ['worker-a', 'worker-b', 'worker-c'];
const LEASE_MS = 30_000;
const RETRY_DELAY_MS = 200;

/** What one round submits: work on three threads of two tenants. */
function roundOfWork(round: number): SubmitRequest[] {
  const meta = { round: String(round) };
  return [
    { tenant: 'acme', thread: `order-${round}01`, agent: 'billing', input: 'charge card', metadata: meta },
    { tenant: 'acme', thread: `order-${round}01`, agent: 'mail', input: 'send receipt', metadata: meta },
    { tenant: 'acme', thread: `order-${round}02`, agent: 'billing', input: 'charge card', metadata: meta },
    { tenant: 'globex', thread: `invoice-${round}`, agent: 'pdf', input: 'render invoice', metadata: meta },
    { tenant: 'globex', thread: `invoice-${round}`, agent: 'mail', input: 'email invoice', metadata: meta },
  ];
}

/** The work itself, simulated: "email invoice" fails its first attempt (the mail server says try later). */
async function runJob(entry: Entry, attempt: number): Promise<string> {
  await sleep(5 + Math.floor(Math.random() * 10));
  const input = Buffer.from(entry.input).toString('utf8');
  if (input === 'email invoice' && attempt === 1) throw new Error('SMTP 451: mailbox busy, try again later');
  return `done: ${input}`;
}

async function main(): Promise<void> {
  const openedAt = performance.now();
  // Repairs made on open (a torn tail cut after a crash) are printed, and counted in metrics().
  const onWarning = ({ code, message }: { code: string; message: string }): void => console.log(`!! ${code}: ${message}`);
  const queue = await openRunQueue({ log: { kind: 'file', dir: DIR }, partitions: PARTITIONS, onWarning });
  const replayMs = performance.now() - openedAt;
  try {
    const round = await reportPreviousRuns(queue, replayMs);
    console.log(`\n== Round ${round}: submitting ${roundOfWork(round).length} jobs, running ${WORKERS.length} workers`);
    const tickets = [];
    for (const request of roundOfWork(round)) tickets.push(await queue.submit(request));
    const stop = new AbortController();
    const workers = WORKERS.map((holder) => work(queue, holder, stop.signal));
    for (const ticket of tickets) await queue.awaitClosed(ticket.tenant, ticket.entryId, { timeoutMs: 10_000 });
    stop.abort();
    await Promise.all(workers);
    console.log('\n== Audit trail of each entry, read back from the log');
    for (const ticket of tickets) {
      const entry = await queue.entry(ticket.tenant, ticket.entryId);
      console.log(`${entry.entryId}  ${entry.tenant}/${entry.thread}  ${entry.agent}: ${entry.outcome ?? entry.status}`);
      for (const item of await entryHistory(queue.log, ticket.tenant, ticket.entryId)) console.log(`   ${formatHistoryItem(item)}`);
    }
    printMetrics(await queue.metrics());
    console.log(`\nState lives in ${DIR}; run \`npm start\` again to see it rebuilt from the log (rm -rf ${DIR} to start over).`);
  } finally {
    await queue.stop();
  }
}

/** Says what the replay found; answers the number of the next round. */
async function reportPreviousRuns(queue: RunQueue, replayMs: number): Promise<number> {
  let events = 0;
  for (let p = 0; p < queue.partitions; p++) for await (const _ of queue.log.read(p, 0n)) events++;
  // Open entries are in the views; closed ones are read back (the views keep only their tickets).
  const closed = queue.views().flatMap((view) => view.oldestClosed(Number.POSITIVE_INFINITY, () => true));
  const entries = [
    ...queue.views().flatMap((view) => [...view.entries.values()]),
    ...(await Promise.all(closed.map((ticket) => queue.entry(ticket.tenant, ticket.entryId)))),
  ];
  if (entries.length === 0) {
    console.log(`== Opened an empty log in ${DIR} (first run)`);
    return 1;
  }
  const lastRound = Math.max(...entries.map((entry) => Number(entry.metadata.round ?? 0)));
  const open = entries.filter((entry) => entry.outcome === null).length;
  console.log(`== Rebuilt the queue from the log in ${DIR}: replayed ${events} events (opening and replay took ${replayMs.toFixed(0)} ms)`);
  console.log(`   ${entries.length} entries from ${lastRound} earlier round(s), ${open} open; round ${lastRound} left:`);
  for (const entry of entries.filter((e) => e.metadata.round === String(lastRound)).sort(bySeq)) {
    const runs = entry.attempts.length === 1 ? '1 attempt' : `${entry.attempts.length} attempts`;
    console.log(
      `   ${entry.entryId.padEnd(5)} ${`${entry.tenant}/${entry.thread}`.padEnd(18)} ${entry.agent.padEnd(8)} ${entry.outcome ?? 'open'}, ${runs}`,
    );
  }
  return lastRound + 1;
}

function bySeq(a: { submittedAt: number; entryId: string }, b: { submittedAt: number; entryId: string }): number {
  return a.submittedAt - b.submittedAt || a.entryId.localeCompare(b.entryId);
}

/** One worker: take, start an attempt, run, close (or yield retry on failure), until stopped. */
async function work(queue: RunQueue, holder: string, signal: AbortSignal): Promise<void> {
  while (!signal.aborted) {
    const taken = await queue.take({ agents: AGENTS, holder, ttlMs: LEASE_MS });
    if (taken === null) {
      await waitForWork(queue, signal);
      continue;
    }
    const attempt = await queue.startAttempt(taken.lease, `${holder}-${randomUUID().slice(0, 8)}`);
    await finish(queue, taken.lease, taken.entry, attempt.attempt);
  }
}

async function finish(queue: RunQueue, lease: Lease, entry: Entry, attempt: number): Promise<void> {
  try {
    const result = await runJob(entry, attempt);
    await queue.close(lease, { status: 'succeeded', result });
  } catch (error) {
    if (attempt >= entry.maxAttempts) await queue.close(lease, { status: 'failed', error: String(error) });
    else await queue.yield(lease, { kind: 'retry', error: (error as Error).message, delayMs: RETRY_DELAY_MS });
  }
}

/** Resolves when something becomes takeable (onWork), when a delay is due, or on abort. */
async function waitForWork(queue: RunQueue, signal: AbortSignal): Promise<void> {
  const due = await queue.nextDueAt(AGENTS);
  return new Promise((resolve) => {
    const timer = setTimeout(done, due === null ? 1_000 : Math.max(1, due - queue.now()));
    const unsubscribe = queue.onWork(done);
    signal.addEventListener('abort', done, { once: true });
    function done(): void {
      clearTimeout(timer);
      unsubscribe();
      signal.removeEventListener('abort', done);
      resolve();
    }
  });
}

function printMetrics(m: QueueMetrics): void {
  const avg = (total: number, count: number): string => (count === 0 ? '-' : `${(total / count).toFixed(1)} ms`);
  console.log('\n== Metrics (all rounds, folded from the log)');
  console.log(
    `   enqueued ${m.enqueued}  succeeded ${m.succeeded}  failed ${m.failed}  retried ${m.retried}  open ${m.open}  processed attempts ${m.processed}`,
  );
  console.log(
    `   wait (submit to first attempt) max ${m.maxWaitMs} ms   exec per attempt avg ${avg(m.totalExecMs, m.processed)}, max ${m.maxExecMs} ms`,
  );
  const warnings = Object.entries(m.warnings).map(([code, count]) => `${code} ${count}`);
  console.log(`   warnings since open: ${warnings.length === 0 ? 'none' : warnings.join('  ')}`);
}

await main();
