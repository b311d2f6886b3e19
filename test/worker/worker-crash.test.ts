/**
 * A Worker killed (SIGKILL) mid-batch: its pool takes and starts many entries in one command
 * (takeStarted) and closes those finished in one turn together (closer.ts). After two killed
 * workers and a third that runs to the end, nothing is lost and nothing run twice that need
 * not be: every entry closes once, succeeded, with the result of a run that happened; an entry
 * whose close a worker was told is durable is never run again; within one process no entry
 * runs twice; and an entry run again (its first run's close not durable when the process
 * died) runs with a later attempt.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { describe, it } from 'node:test';
import { openFileLog } from '../../src/log/file/file-log.ts';
import { openRunQueue } from '../../src/queue/open-run-queue.ts';
import { Worker } from '../../src/worker/worker.ts';
import { allEvents } from '../contract/fixtures.ts';
import { scratchDir } from '../support/cleanup.ts';

const ENTRIES = 3_000;
const TEN_MINUTES = 600_000;

interface Run {
  entryId: string;
  attempt: number;
  /** Which process ran it: 0 and 1 the killed children, 2 the last worker. */
  round: number;
}

interface Seen {
  runs: Run[];
  /** Entry id -> the attempt whose close a worker was told is durable. */
  closed: Map<string, number>;
}

/** Runs a worker child until it has reported `closes` durable closes, then SIGKILLs it. */
function runAndKill(dir: string, round: number, closes: number, seen: Seen): Promise<void> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', join(import.meta.dirname, 'crash-worker-child.ts'), dir, String(round * TEN_MINUTES)],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  let count = 0;
  return new Promise((resolve, reject) => {
    createInterface({ input: child.stdout }).on('line', (line) => {
      const [kind, entryId, attempt] = line.split(' ');
      if (kind === 'ran') seen.runs.push({ entryId: entryId!, attempt: Number(attempt), round });
      if (kind !== 'closed') return;
      seen.closed.set(entryId!, Number(attempt));
      if (++count === closes) child.kill('SIGKILL');
    });
    child.on('exit', (code, signal) => (signal === 'SIGKILL' ? resolve() : reject(new Error(`worker child exited with ${code}`))));
  });
}

describe('a Worker killed mid-batch', () => {
  it('loses nothing, and runs again only what no durable close covered', async (t) => {
    const dir = await scratchDir(t, 'runlog-worker-crash-');
    const producer = await openRunQueue({ log: { kind: 'file', dir }, partitions: 4 });
    const entryIds: string[] = [];
    for (let i = 0; i < ENTRIES; i += 500) {
      const batch = Array.from({ length: 500 }, (_, j) => ({ tenant: 'acme', thread: `t${i + j}`, agent: 'crash', input: `job ${i + j}` }));
      for (const answer of await producer.submitBatch(batch)) {
        assert.ok('ticket' in answer, JSON.stringify(answer));
        entryIds.push(answer.ticket.entryId);
      }
    }
    await producer.stop();

    const seen: Seen = { runs: [], closed: new Map() };
    await runAndKill(dir, 0, 700, seen);
    await runAndKill(dir, 1, 700, seen);
    const killedClosed = new Map(seen.closed);

    // The last worker, two steps of ten minutes later still: the killed children's leases have expired.
    const queue = await openRunQueue({ log: { kind: 'file', dir }, clock: () => Date.now() + 2 * TEN_MINUTES });
    const worker = new Worker(queue, { concurrency: 64, logger: () => {} });
    worker.handle('crash', ({ entry, attempt }) => {
      seen.runs.push({ entryId: entry.entryId, attempt, round: 2 });
      return `ok-${attempt}`;
    });
    const stop = new AbortController();
    const running = worker.run(stop.signal);
    try {
      for (const entryId of entryIds) {
        const entry = await queue.awaitClosed('acme', entryId, { timeoutMs: 120_000 });
        assert.equal(entry?.outcome, 'succeeded', `entry ${entryId} did not close succeeded: ${JSON.stringify(entry?.outcome)}`);
        const result = new TextDecoder().decode(entry.result!);
        const runs = seen.runs.filter((run) => run.entryId === entryId);
        assert.ok(
          runs.some((run) => `ok-${run.attempt}` === result),
          `entry ${entryId} closed with ${result}, of no run: ${JSON.stringify(runs)}`,
        );
        const told = killedClosed.get(entryId);
        if (told !== undefined) {
          assert.equal(result, `ok-${told}`, `entry ${entryId}: a worker was told attempt ${told} closed it durably`);
          assert.deepEqual(
            runs.filter((run) => run.attempt > told),
            [],
            `entry ${entryId} ran again after its durable close`,
          );
        }
        for (let round = 0; round < 3; round++) {
          const inRound = runs.filter((run) => run.round === round);
          assert.ok(inRound.length <= 1, `entry ${entryId} ran ${inRound.length} times in process ${round}: ${JSON.stringify(inRound)}`);
        }
        const attempts = runs.map((run) => run.attempt);
        assert.deepEqual(
          attempts,
          [...attempts].sort((a, b) => a - b),
          `entry ${entryId}: a later run had an earlier attempt`,
        );
        assert.equal(new Set(attempts).size, attempts.length, `entry ${entryId}: an attempt ran twice: ${JSON.stringify(runs)}`);
      }
    } finally {
      stop.abort();
      await running;
      await queue.stop();
    }
    assert.ok(killedClosed.size >= 1_400, `the killed workers closed only ${killedClosed.size}`);
    assert.ok(
      seen.runs.some((run) => run.round < 2 && !killedClosed.has(run.entryId)),
      'no run was cut short by a kill: the test killed nothing mid-batch',
    );

    const log = await openFileLog({ dir });
    try {
      const closes = new Map<string, number>();
      for (const event of await allEvents(log))
        if (event.type === 'Closed') closes.set(event.entryId, (closes.get(event.entryId) ?? 0) + 1);
      assert.equal(closes.size, ENTRIES);
      assert.deepEqual(
        [...closes].filter(([, n]) => n !== 1),
        [],
        'an entry closed more than once',
      );
    } finally {
      await log.close();
    }
  });
});
