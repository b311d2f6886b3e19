/**
 * Snapshots written over several turns (src/projector/snapshots.ts saveSnapshot: the ticket
 * index frozen, its columns written 2,048 rows (STRETCH) a turn, the state checksummed 4 MiB a turn) on
 * a real file log, with more closed tickets than one stretch holds:
 *   - while one is written, the queue goes on submitting, closing and pruning: the snapshot
 *     restores to the view as it was when it was taken, and a queue reopened from it equals the
 *     replay from zero;
 *   - a queue stopped while one is being written leaves a valid snapshot covering the whole
 *     log, and nothing acknowledged is lost;
 *   - a child killed (SIGKILL) while writing one: a restart ignores no snapshot and equals the
 *     replay from zero, and nothing acknowledged is lost.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { it, type TestContext } from 'node:test';
import { decodeSnapshot, decodeSnapshotState } from '../../src/events/snapshot-codec.ts';
import { openFileLog } from '../../src/log/file/file-log.ts';
import { replayPartition } from '../../src/projector/replay.ts';
import { openView, saveSnapshot } from '../../src/projector/snapshots.ts';
import { openRunQueue, openRunQueueOnLog } from '../../src/queue/open-run-queue.ts';
import type { RunQueue } from '../../src/queue/run-queue.ts';
import type { Entry, RunQueueOptions } from '../../src/queue/types.ts';
import type { RunlogWarning } from '../../src/warnings.ts';
import { ClosedColumnsWriting, STRETCH } from '../../projections/ticket-columns-writer.ts';
import { TicketIndex } from '../../projections/ticket-index.ts';
import { restoreView } from '../../projections/view-snapshot.ts';
import { FakeClock } from '../contract/fixtures.ts';
import { scratchDir } from '../support/cleanup.ts';
import { snapshotView } from '../support/snapshot-view.ts';
import { assertAcknowledgedKept, type Acknowledged } from './crash-rounds.ts';
import { closeInBulk, recorded, sampled } from './snapshot-stretches-bulk.ts';
import { snapshotFiles } from '../support/snapshot-files.ts';

type Settings = Omit<RunQueueOptions, 'log' | 'partitions'>;

async function open(
  t: TestContext,
  dir: string,
  clock: FakeClock,
  settings: Settings,
): Promise<{ queue: RunQueue; warnings: RunlogWarning[] }> {
  const warnings: RunlogWarning[] = [];
  const log = await openFileLog({ dir, fsync: false });
  const queue = await openRunQueueOnLog(log, { clock: clock.read, onWarning: (w) => warnings.push(w), ...settings });
  t.after(() => queue.stop());
  return { queue, warnings };
}

/** One lifecycle on a thread of its own: submitted, taken and started, closed; acknowledged as answered. */
async function lifecycle(queue: RunQueue, clock: FakeClock, name: string, ack: Acknowledged): Promise<void> {
  clock.advance(1);
  const { entryId } = await queue.submit({ tenant: 'acme', thread: name, agent: 'build', input: name, key: name });
  ack.submitted.set(entryId, name);
  const [started] = await queue.takeStarted({ agents: ['build'], holder: name, ttlMs: 60_000 });
  if (started === undefined) return;
  const closed: Entry = await queue.close(started.lease, { status: 'succeeded', result: 'ok' });
  ack.closed.add(closed.entryId);
}

/** A view newly opened on `dir`'s log from its latest snapshot (none ignored; `fromSnapshot`: there is one) equals the replay from zero. */
async function assertReopenEqualsReplay(dir: string, fromSnapshot: boolean): Promise<void> {
  const warnings: RunlogWarning[] = [];
  const log = await openFileLog({ dir, fsync: false });
  try {
    const opened = await openView(log, 0, (warning) => warnings.push(warning));
    assert.deepEqual(warnings, [], 'no snapshot ignored');
    if (fromSnapshot) assert.ok(opened.snapshot !== null, 'opened from a snapshot');
    assert.deepEqual(snapshotView(opened.view), snapshotView(await replayPartition(log, 0)));
  } finally {
    await log.close();
  }
}

it(
  'a snapshot written while the queue submits, closes and prunes restores to the view when it was taken',
  { timeout: 300_000 },
  async (t) => {
    const dir = await scratchDir(t, 'runlog-snapshot-stretches-');
    const clock = new FakeClock();
    const { queue, warnings } = await open(t, dir, clock, { snapshots: false }); // no snapshot but the one taken here
    const ack: Acknowledged = { submitted: new Map(), closed: new Set() };
    await closeInBulk(queue, 'acme', 'bulk', 3 * STRETCH + 1_000, () => clock.advance(1), recorded(ack));
    const view = queue.views()[0]!;
    assert.ok(view.closed.size > 3 * STRETCH);
    const atCapture = snapshotView(view);
    const closedAtCapture = view.closed.size;
    const nextOffset = view.nextOffset;
    let saved = false;
    const saving = saveSnapshot(queue.log, view).finally(() => (saved = true));
    // Meanwhile: lifecycles, and prunes of the oldest closes (every closed ticket is past a lifetime
    // of 0), the first round's reaching rows the stretches have not written yet (the first was
    // written in the snapshot's own turn, the next comes a turn later).
    let round = 0;
    while (!saved) {
      await Promise.all([
        ...Array.from({ length: 8 }, (_, caller) => lifecycle(queue, clock, `during-${round}-${caller}`, ack)),
        queue.prune(0, STRETCH + STRETCH / 2),
      ]);
      // A turn of the event loop, as callers over the network give: with fsync off an append
      // completes without one, and a caller looping in process would starve the snapshot's turns.
      await nextTurn();
      round++;
    }
    await saving;
    t.diagnostic(`${round} rounds of commands while the snapshot of ${closedAtCapture} closed tickets was written`);
    assert.ok(view.closed.size < 3 * STRETCH, 'pruned meanwhile');
    const files = await snapshotFiles(dir);
    assert.equal(files.length, 1);
    const snapshot = decodeSnapshot(await readFile(files[0]!));
    assert.equal(snapshot.nextOffset, nextOffset);
    assert.deepEqual(snapshotView(restoreView(0, decodeSnapshotState(snapshot.state), snapshot.nextOffset)), atCapture);
    assert.deepEqual(warnings, []);
    await queue.stop();
    await assertReopenEqualsReplay(dir, true);
  },
);

it(
  'a queue stopped while a snapshot is being written leaves a valid snapshot of the whole log, nothing acknowledged lost',
  { timeout: 300_000 },
  async (t) => {
    const dir = await scratchDir(t, 'runlog-snapshot-stretches-stop-');
    const clock = new FakeClock();
    // Snapshots by the timer only (every 5 ms of real time, at the next idle moment).
    const { queue, warnings } = await open(t, dir, clock, { snapshots: { everyRecords: 1e12, everyMs: 5 } });
    const ack: Acknowledged = { submitted: new Map(), closed: new Set() };
    await closeInBulk(queue, 'acme', 'bulk', 2 * STRETCH + 100, () => clock.advance(1), sampled(recorded(ack), 100));
    // The stop comes from inside the snapshot: a microtask after a snapshot's first stretch is
    // written (in the turn it began), before its next stretch (a turn later). So stop() is called
    // with that snapshot mid-way, whatever the timing of the lifecycles around it.
    // A snapshot the timer began during the bulk closes may still be mid-way: only one whose
    // beginning (the ticket index frozen) comes after these hooks counts.
    let frozen = 0;
    const freeze = TicketIndex.prototype.freeze;
    TicketIndex.prototype.freeze = function (this: TicketIndex) {
      frozen++;
      return freeze.call(this);
    };
    t.after(() => (TicketIndex.prototype.freeze = freeze));
    let [stretchesAfterStop, midway] = [0, null as ClosedColumnsWriting | null];
    let stopped: Promise<void> | null = null;
    const writeStretch = ClosedColumnsWriting.prototype.writeStretch;
    ClosedColumnsWriting.prototype.writeStretch = function (this: ClosedColumnsWriting) {
      const wrote = writeStretch.call(this);
      if (wrote && this === midway) stretchesAfterStop++;
      else if (wrote && stopped === null && frozen > 0) {
        midway = this;
        stopped = new Promise((resolve) => queueMicrotask(() => resolve(stopMidSnapshot())));
      }
      return wrote;
    };
    t.after(() => (ClosedColumnsWriting.prototype.writeStretch = writeStretch));
    // Commands in flight and a snapshot being written: stop. Those acknowledged must be kept.
    const stopMidSnapshot = async (): Promise<void> => {
      const inFlight = Array.from({ length: 8 }, (_, caller) => lifecycle(queue, clock, `stopping-${caller}`, ack).catch(() => {}));
      await queue.stop();
      await Promise.all(inFlight);
    };
    // Lifecycles, a turn after each for the snapshot timer (see above), until a snapshot begins
    // and stops the queue; a lifecycle the stop cuts short is not acknowledged in full.
    for (let n = 0; stopped === null; n++) {
      await lifecycle(queue, clock, `before-${n}`, ack).catch((error: unknown) => {
        if (stopped === null) throw error;
      });
      await nextTurn();
    }
    await stopped;
    assert.ok(stretchesAfterStop > 0, 'stopped while the snapshot still had stretches to write');
    assert.deepEqual(
      warnings.filter((w) => w.code === 'RUNLOG_SNAPSHOT_FAILED'),
      [],
    );
    const latest = decodeSnapshot(await readFile((await snapshotFiles(dir)).at(-1)!));
    const log = await openFileLog({ dir, fsync: false });
    const end = await log.endOffset(0);
    await log.close();
    assert.equal(latest.nextOffset, end, 'the latest snapshot covers the whole log');
    await assertReopenEqualsReplay(dir, true);
    const reopened = await openRunQueue({ log: { kind: 'file', dir, fsync: false }, partitions: 1, snapshots: false });
    try {
      await assertAcknowledgedKept(reopened, ack, () => 'acme');
    } finally {
      await reopened.stop();
    }
  },
);

it(
  'SIGKILL while a snapshot of more than one stretch is written: a restart ignores none, equals the replay, loses nothing acknowledged',
  { timeout: 600_000 },
  async (t) => {
    const dir = await scratchDir(t, 'runlog-snapshot-stretches-kill-');
    const ack: Acknowledged = { submitted: new Map(), closed: new Set() };
    let midway = 0;
    for (let round = 0; round < 3; round++) {
      if (await killWhileSnapshotting(dir, round, 2 + round, ack)) midway++;
      await assertReopenEqualsReplay(dir, false);
      const queue = await openRunQueue({ log: { kind: 'file', dir }, partitions: 1, snapshots: false });
      try {
        await assertAcknowledgedKept(queue, ack, (input) => (input.includes('-bulk-') ? 'bulk' : 'crash'));
      } finally {
        await queue.stop();
      }
    }
    t.diagnostic(
      `${ack.submitted.size} submissions and ${ack.closed.size} closes acknowledged; ${midway} of 3 kills before the snapshot being written was saved`,
    );
  },
);

/**
 * Runs snapshot-stretches-child.ts on `dir` and SIGKILLs it as soon as it freezes its ticket
 * index of more than one stretch of rows for the `nth` time (a snapshot begins); answers
 * whether that snapshot had not been saved yet when the child died.
 */
function killWhileSnapshotting(dir: string, round: number, nth: number, ack: Acknowledged): Promise<boolean> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(import.meta.dirname, 'snapshot-stretches-child.ts'), dir, String(round)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let [large, saved] = [0, 0];
  let killedAt = -1;
  let loaded = false;
  return new Promise((resolve, reject) => {
    createInterface({ input: child.stdout }).on('line', (line) => {
      const [kind, entryId, input] = line.split(' ');
      if (kind === 'submitted') ack.submitted.set(entryId!, input!);
      if (kind === 'closed') ack.closed.add(entryId!);
      if (kind === 'saved') saved++;
      if (kind === 'loaded') loaded = true;
      if (kind === 'freezing' && loaded && Number(entryId) > STRETCH && ++large === nth) {
        killedAt = saved;
        child.kill('SIGKILL');
      }
    });
    child.on('exit', (code, signal) =>
      signal === 'SIGKILL' ? resolve(saved === killedAt) : reject(new Error(`child exited with ${code}`)),
    );
  });
}

function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
