/**
 * Races at the ownership seam of a queue whose partitions are assigned to it (ownership
 * 'assigned'), on the file log on real files: commands and waits that meet a partition while
 * it is being acquired, and a retention sweep on a node that owns only some partitions.
 * The acquire is held in its replay by a gate on the real log's read (a fault by wrapping).
 */
import assert from 'node:assert/strict';
import { describe, it, type TestContext } from 'node:test';
import type { EventLog } from '../../src/log/event-log.ts';
import { openFileLog } from '../../src/log/file/file-log.ts';
import { partitionOf } from '../../src/log/partitioner.ts';
import { openRunQueue, openRunQueueOnLog } from '../../src/queue/open-run-queue.ts';
import type { RunQueue } from '../../src/queue/run-queue.ts';
import type { RunlogWarning } from '../../src/warnings.ts';
import { FakeClock, allEvents, submitOf } from '../contract/fixtures.ts';
import { onCleanup, scratchDir } from '../support/cleanup.ts';
import { wrapLog } from '../support/wrap-log.ts';

const PARTITIONS = 2;

function threadOn(partition: number): string {
  for (let i = 0; ; i++) if (partitionOf('acme', `t${i}`, PARTITIONS) === partition) return `t${i}`;
}

/** A directory whose partition 0 holds one open entry, submitted by a node whose clock read `clock`. */
async function writtenBy(t: TestContext, clock: FakeClock): Promise<{ dir: string; entryId: string }> {
  const dir = await scratchDir(t, 'runlog-ownership-races');
  const before = await openRunQueue({ log: { kind: 'file', dir }, partitions: PARTITIONS, clock: clock.read });
  const { entryId } = await before.submit(submitOf('acme', threadOn(0)));
  await before.stop();
  return { dir, entryId };
}

/** An assigned queue on `dir` whose reads (an acquire's replay) wait until `open()` is called. */
async function gatedQueue(
  t: TestContext,
  dir: string,
  clock: FakeClock,
  onWarning: (warning: RunlogWarning) => void = () => {},
): Promise<{ queue: RunQueue; open: () => void }> {
  const log = await openFileLog({ dir, partitions: PARTITIONS });
  let open!: () => void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  const gated: EventLog = wrapLog(log, {
    read: (partition: number, from: bigint, options?: Parameters<EventLog['read']>[2]) =>
      (async function* () {
        await gate;
        yield* log.read(partition, from, options);
      })(),
  });
  const queue = await openRunQueueOnLog(gated, { clock: clock.read, ownership: 'assigned', onWarning });
  onCleanup(t, () => queue.stop());
  return { queue, open };
}

/** acquire(partition), handed back once the partition is being acquired (held at the gate). */
async function acquiring(queue: RunQueue, partition: number): Promise<{ acquired: Promise<void> }> {
  const acquired = queue.acquire(partition);
  while ((await queue.health())[partition]!.mode !== 'acquiring') await new Promise((resolve) => setImmediate(resolve));
  return { acquired };
}

describe('the ownership seam under races (file log)', () => {
  it('a submit waiting for an acquire is stamped no earlier than the acquired partition (written by a node whose clock ran ahead)', async (t) => {
    const ahead = new FakeClock(1_700_000_000_000 + 3_600_000);
    const { dir, entryId } = await writtenBy(t, ahead);
    const warnings: RunlogWarning[] = [];
    const { queue, open } = await gatedQueue(t, dir, new FakeClock(), (w) => warnings.push(w));
    const { acquired } = await acquiring(queue, 0);
    const submitted = queue.submit(submitOf('acme', threadOn(0)));
    open();
    await acquired;
    const ticket = await submitted;

    const first = await queue.entry('acme', entryId);
    const second = await queue.entry('acme', ticket.entryId);
    assert.ok(
      second.submittedAt >= first.submittedAt,
      `the later submission is stamped ${second.submittedAt}, before the partition's last event at ${first.submittedAt}`,
    );
    const times = (await allEvents(queue.log)).map((event) => event.at);
    assert.deepEqual(
      times,
      [...times].sort((a, b) => a - b),
      'event times never decrease on the partition',
    );
    assert.ok(
      warnings.some((w) => w.code === 'RUNLOG_CLOCK_STEP'),
      'the clock behind the acquired partition is reported',
    );
  });

  it('awaitClosed of an open entry, called while its partition is being acquired, waits for the close', async (t) => {
    const clock = new FakeClock();
    const { dir, entryId } = await writtenBy(t, clock);
    const { queue, open } = await gatedQueue(t, dir, clock);
    const { acquired } = await acquiring(queue, 0);
    const waiting = queue.awaitClosed('acme', entryId, { timeoutMs: 60_000 });
    open();
    await acquired;
    let answered: unknown = 'not yet';
    void waiting.then((entry) => (answered = entry));
    assert.equal((await queue.entry('acme', entryId)).status, 'open');
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(answered, 'not yet', 'awaitClosed answered while the entry is still open');

    await queue.cancel('acme', entryId, 'done waiting');
    const closed = await waiting;
    assert.equal(closed?.entryId, entryId);
    assert.equal(closed?.status, 'closed');
    assert.equal(closed?.outcome, 'cancelled');
  });

  it('a sweep on a node owning some partitions covers those and is not refused for the others', async (t) => {
    const clock = new FakeClock();
    const dir = await scratchDir(t, 'runlog-ownership-races');
    const log = await openFileLog({ dir, partitions: PARTITIONS });
    const warnings: RunlogWarning[] = [];
    const queue = await openRunQueueOnLog(log, { clock: clock.read, ownership: 'assigned', onWarning: (w) => warnings.push(w) });
    onCleanup(t, () => queue.stop());
    await queue.acquire(0);
    const late = await queue.submit(submitOf('acme', threadOn(0), { deadline: clock.nowMs + 1_000 }));
    clock.advance(2_000);

    assert.deepEqual(await queue.sweep({ ticketLifetimeMs: 60_000, limit: 10 }), { expired: 1, pruned: 0 });
    assert.equal((await queue.entry('acme', late.entryId)).outcome, 'expired');
    assert.equal(await queue.expireOverdue(), 0);
    clock.advance(1);
    assert.equal(await queue.prune(0, 10), 1);
    assert.deepEqual(
      warnings.filter((w) => w.code === 'RUNLOG_SWEEP'),
      [],
    );
  });
});
