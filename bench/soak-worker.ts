/**
 * Worker soak (not part of npm test). A parent process starts a child that runs 4 Workers
 * (concurrency 8 each) on one RunQueue over the embedded file log (or Kafka with
 * `--log kafka` and KAFKA_BROKERS set), submits N entries over 1,000 threads (5% of runs
 * fail at random), and SIGKILLs and restarts the child every few seconds until the child
 * reports every entry closed. Then it reads the log and checks: every entry succeeded or
 * parked, none closed twice, each thread's attempts always on its head entry (per-thread
 * order), every acknowledged submission present.
 *
 *   npx tsx bench/soak-worker.ts --entries 5000 [--kill-ms 3000] [--log file|kafka]
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, open, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { decodeEvent } from '../src/events/codec.ts';
import type { LogConfig } from '../src/log/event-log.ts';
import { openLog } from '../src/log/open-log.ts';
import { type RunQueue } from '../src/queue/run-queue.ts';
import { openRunQueue } from '../src/queue/open-run-queue.ts';
import { Worker } from '../src/worker/worker.ts';

const PARTITIONS = 8;
const THREADS = 1000;
const WORKERS = 4;
const CONCURRENCY = 8;
const FAILURE_RATE = 0.05;
const SUBMIT_BATCH = 256;

const { values } = parseArgs({
  options: {
    entries: { type: 'string', default: '100000' },
    'kill-ms': { type: 'string', default: '3000' },
    log: { type: 'string', default: 'file' },
    child: { type: 'string' },
  },
});
const entries = Number(values.entries);

function logConfig(dir: string): LogConfig {
  if (values.log === 'kafka') {
    const brokers = (process.env.KAFKA_BROKERS ?? '').split(',').filter(Boolean);
    if (brokers.length === 0) throw new Error('--log kafka needs KAFKA_BROKERS');
    return { kind: 'kafka', brokers, topic: `soak-${dir.split('-').at(-1)}` };
  }
  return { kind: 'file', dir };
}

// ---- child: submit and work until everything is closed -------------------------------

async function child(dir: string): Promise<void> {
  const queue = await openRunQueue({ log: logConfig(dir), partitions: PARTITIONS });
  const stop = new AbortController();
  const runs = Array.from({ length: WORKERS }, () => startWorker(queue, stop.signal));
  await submitAll(queue, dir);
  while ((await queue.metrics()).open > 0) await new Promise((resolve) => setTimeout(resolve, 200));
  stop.abort();
  await Promise.all(runs);
  await queue.stop();
  await writeFile(join(dir, 'DONE'), 'done');
}

function startWorker(queue: RunQueue, signal: AbortSignal): Promise<void> {
  const worker = new Worker(queue, { concurrency: CONCURRENCY, leaseMs: 2000, pollMs: 200, backoff: (attempt) => 50 * attempt });
  worker.handle('soak', async () => {
    await new Promise((resolve) => setImmediate(resolve));
    if (Math.random() < FAILURE_RATE) throw new Error('random failure');
    return 'ok';
  });
  return worker.run(signal);
}

/** Submits entries from the last acknowledged index on; keys make resubmission idempotent. */
async function submitAll(queue: RunQueue, dir: string): Promise<void> {
  const ackPath = join(dir, 'ACKED');
  let next = Number(await readFile(ackPath, 'utf8').catch(() => '0'));
  while (next < entries) {
    const end = Math.min(entries, next + SUBMIT_BATCH);
    const batch = [];
    for (let i = next; i < end; i++) {
      batch.push(queue.submit({ tenant: 'soak', thread: `t${i % THREADS}`, agent: 'soak', input: `entry ${i}`, key: `e${i}` }));
    }
    await Promise.all(batch);
    await writeDurably(ackPath, String(end));
    next = end;
  }
}

async function writeDurably(path: string, text: string): Promise<void> {
  const file = await open(path, 'w');
  await file.writeFile(text);
  await file.sync();
  await file.close();
}

// ---- parent: kill and restart the child, then check the log ---------------------------

async function parent(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), `runlog-soak-${randomUUID().slice(0, 8)}-`));
  const started = Date.now();
  let restarts = 0;
  for (;;) {
    await clearEmptyLock(dir);
    const code = await runChild(dir, Number(values['kill-ms']));
    if (code === 0 && (await exists(join(dir, 'DONE')))) break;
    restarts++;
  }
  const seconds = (Date.now() - started) / 1000;
  const report = await check(dir);
  console.log(
    JSON.stringify({ entries, seconds, entriesPerSecond: Math.round(entries / seconds), restartsSurvived: restarts, ...report }, null, 2),
  );
  await rm(dir, { recursive: true, force: true });
  if (report.duplicates + report.lost + report.orderViolations + report.notClosed > 0) process.exit(1);
}

/** Runs the child, SIGKILLing it after a random 0.5x-1.5x of killMs; answers its exit code (null: killed). */
function runChild(dir: string, killMs: number): Promise<number | null> {
  const self = fileURLToPath(import.meta.url);
  const args = ['--import', 'tsx', self, '--child', dir, '--entries', String(entries), '--log', values.log!];
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'inherit', 'inherit'] });
  const killer = setTimeout(() => child.kill('SIGKILL'), killMs * (0.5 + Math.random()));
  return new Promise((resolve) => {
    child.on('exit', (code) => {
      clearTimeout(killer);
      resolve(code);
    });
  });
}

/** A kill between creating the lock file and writing the pid leaves it empty: the child is dead, so clear it. */
async function clearEmptyLock(dir: string): Promise<void> {
  const lock = join(dir, 'LOCK');
  if ((await exists(lock)) && (await readFile(lock, 'utf8')).trim() === '') await rm(lock, { force: true });
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

async function check(dir: string) {
  const acked = Number(await readFile(join(dir, 'ACKED'), 'utf8').catch(() => '0'));
  const log = await openLog(logConfig(dir), PARTITIONS);
  const keys = new Map<string, string>();
  const outcomes = new Map<string, string>();
  const openByThread = new Map<string, string[]>();
  let duplicates = 0;
  let orderViolations = 0;
  let attempts = 0;
  for (let p = 0; p < PARTITIONS; p++) {
    for await (const record of log.read(p, 0n)) {
      if (record.value === null) continue;
      const event = decodeEvent(record.value);
      const thread = openByThread.get(event.thread) ?? [];
      openByThread.set(event.thread, thread);
      if (event.type === 'Submitted') {
        if (keys.has(event.key!)) duplicates++;
        keys.set(event.key!, event.entryId);
        thread.push(event.entryId);
      } else if (event.type === 'AttemptStarted') {
        attempts++;
        if (thread[0] !== event.entryId) orderViolations++;
      } else if (event.type === 'Closed') {
        if (outcomes.has(event.entryId)) duplicates++;
        outcomes.set(event.entryId, event.outcome);
        thread.splice(thread.indexOf(event.entryId), 1);
      }
    }
  }
  await log.close();
  let lost = 0;
  for (let i = 0; i < acked; i++) if (!keys.has(`e${i}`)) lost++;
  const closed = [...outcomes.values()];
  return {
    acknowledged: acked,
    submitted: keys.size,
    attempts,
    succeeded: closed.filter((o) => o === 'succeeded').length,
    parked: closed.filter((o) => o === 'failed').length,
    notClosed: keys.size - closed.filter((o) => o === 'succeeded' || o === 'failed').length,
    duplicates,
    lost,
    orderViolations,
  };
}

if (values.child !== undefined) await child(values.child);
else await parent();
