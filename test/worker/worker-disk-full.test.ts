/**
 * Hostile test of the early wake (onWork called once a submission is decided, before it is
 * durable) with a running Worker, on a small real tmpfs filled up: submissions whose appends
 * fail with ENOSPC are answered with an error, and the Worker, woken by them, never runs one
 * of them (a take decided against a view holding a submission that then fails must fail with
 * it). Once space is freed, every acknowledged submission runs (again, once its lease runs out,
 * if its close failed), and a reopen holds
 * exactly the acknowledged ones, each closed.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { it } from 'node:test';
import { isRunlogError } from '../../src/errors.ts';
import { openRunQueue } from '../../src/queue/open-run-queue.ts';
import type { RunQueue } from '../../src/queue/run-queue.ts';
import { Worker } from '../../src/worker/worker.ts';
import { allEvents, submitOf } from '../contract/fixtures.ts';
import { onCleanup } from '../support/cleanup.ts';
import { fill, smallTmpfs } from '../support/tmpfs.ts';

/** Big enough that its append needs new pages of the file system. */
const bigSubmit = (thread: string) => submitOf('acme', thread, { input: 'x'.repeat(16 << 10) });

it(
  'a Worker woken by submissions whose appends fail (disk full) never runs them; the acknowledged ones run',
  { timeout: 120_000 },
  async (t) => {
    const mountPoint = await smallTmpfs(t, '2m');
    if (mountPoint === null) return;
    const dir = join(mountPoint, 'log');
    const open = () => openRunQueue({ log: { kind: 'file', dir }, partitions: 1, onWarning: () => {} });
    let queue: RunQueue | null = await open();
    const stop = new AbortController();
    let running: Promise<void> = Promise.resolve();
    onCleanup(t, async () => {
      stop.abort();
      await running;
      await queue?.stop();
      execFileSync('umount', [mountPoint]);
      await rm(mountPoint, { recursive: true, force: true });
    });
    const ran: string[] = [];
    const worker = new Worker(queue, { concurrency: 4, leaseMs: 1_000, logger: () => {} });
    worker.handle('build', ({ entry }) => void ran.push(entry.thread));
    running = worker.run(stop.signal);
    const acknowledged: string[] = [];
    const refused: string[] = [];
    const submit = async (thread: string): Promise<void> => {
      try {
        await queue!.submit(bigSubmit(thread));
        acknowledged.push(thread);
      } catch (error) {
        assert.ok(isRunlogError(error, 'LogUnavailable') && /ENOSPC/.test(error.message), String(error));
        refused.push(thread);
      }
    };
    for (let i = 0; i < 4; i++) await submit(`before-${i}`);
    fill(join(mountPoint, 'filler'));
    // Several at once and one by one: the Worker is woken by each as it is decided.
    await Promise.all(Array.from({ length: 6 }, (_, i) => submit(`during-${i}`)));
    for (let i = 6; i < 10; i++) await submit(`during-${i}`);
    await rm(join(mountPoint, 'filler'));
    for (let i = 0; i < 4; i++) await submit(`after-${i}`);
    await worker.waitIdle();
    stop.abort();
    await running;

    assert.ok(refused.length >= 5, `the full disk refused submissions: ${refused.join(' ')}`);
    const ranRefused = ran.filter((thread) => refused.includes(thread));
    assert.deepEqual(ranRefused, [], 'no refused submission was run');
    // A run whose close failed (the disk full) runs again once its lease runs out: at least once each.
    assert.deepEqual([...new Set(ran)].sort(), [...acknowledged].sort(), 'every acknowledged submission ran');
    await queue.stop();
    queue = await open();
    const submitted = (await allEvents(queue.log)).filter((e) => e.type === 'Submitted').map((e) => e.thread);
    assert.deepEqual([...submitted].sort(), [...acknowledged].sort(), 'the log holds exactly the acknowledged submissions');
    for (const thread of acknowledged) assert.deepEqual(await queue.openEntries('acme', thread), [], `${thread} is closed`);
  },
);
