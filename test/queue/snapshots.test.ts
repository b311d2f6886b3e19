/**
 * Snapshots on a real file log (snapshots/ beside it): a queue opens from its latest snapshot
 * and replays only the records after it; a torn or damaged snapshot, a snapshot of another log,
 * one past the log's end and one from before a compaction are each ignored with a warning
 * (RUNLOG_SNAPSHOT_IGNORED), and the queue opens as a replay from zero would; pruned tickets
 * read TicketExpired with and without snapshots; snapshots are taken every `everyRecords`.
 */
import assert from 'node:assert/strict';
import { cp, mkdir, readFile, rm, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { isRunlogError } from '../../src/errors.ts';
import { openFileLog } from '../../src/log/file/file-log.ts';
import { catchUp, replayPartition } from '../../src/projector/replay.ts';
import { openView, SNAPSHOT_IGNORED, snapshotCovers } from '../../src/projector/snapshots.ts';
import { openRunQueueOnLog } from '../../src/queue/open-run-queue.ts';
import type { RunQueue } from '../../src/queue/run-queue.ts';
import type { RunQueueOptions } from '../../src/queue/types.ts';
import type { RunlogWarning } from '../../src/warnings.ts';
import { decodeSnapshot, decodeSnapshotState } from '../../src/events/snapshot-codec.ts';
import { restoreView } from '../../projections/view-snapshot.ts';
import { FakeClock } from '../contract/fixtures.ts';
import { scratchDir } from '../support/cleanup.ts';
import { snapshotView } from '../support/snapshot-view.ts';
import { snapshotFiles } from '../support/snapshot-files.ts';

type Settings = Omit<RunQueueOptions, 'log' | 'partitions'>;

interface Opened {
  queue: RunQueue;
  warnings: RunlogWarning[];
}

async function open(t: TestContext, dir: string, clock: FakeClock, settings: Settings = {}): Promise<Opened> {
  const warnings: RunlogWarning[] = [];
  const log = await openFileLog({ dir, fsync: false });
  const queue = await openRunQueueOnLog(log, { clock: clock.read, onWarning: (w) => warnings.push(w), ...settings });
  t.after(() => queue.stop());
  return { queue, warnings };
}

/** Submits `n` entries and closes every other one. */
async function work(queue: RunQueue, clock: FakeClock, n: number, prefix = 'w'): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    clock.advance(5);
    const { entryId } = await queue.submit({
      tenant: 'acme',
      thread: `${prefix}${i % 3}`,
      agent: 'build',
      input: `${prefix} ${i}`,
      key: `${prefix}-${i}`,
    });
    ids.push(entryId);
  }
  for (let i = 0; i < n; i += 2) {
    const taken = await queue.take({ agents: ['build'], holder: 'w', ttlMs: 1_000 });
    if (taken === null) break;
    await queue.startAttempt(taken.lease, `run-${prefix}-${i}`);
    await queue.close(taken.lease, { status: 'succeeded', result: 'done' });
  }
  return ids;
}

/** Polls `read` until it answers a non-empty list (a snapshot is saved in the background); [] after a minute. */
async function eventually(read: () => Promise<string[]>): Promise<string[]> {
  for (const until = Date.now() + 60_000; Date.now() < until; await new Promise((r) => setTimeout(r, 10))) {
    const found = await read();
    if (found.length > 0) return found;
  }
  return [];
}

/** The queue's view equals a replay of its log from zero (and the warnings say what was ignored). */
async function assertEqualsReplay(queue: RunQueue): Promise<void> {
  const replayed = await replayPartition(queue.log, 0);
  assert.deepEqual(snapshotView(queue.views()[0]!), snapshotView(replayed));
}

test('a stopped queue leaves a snapshot; reopened, it replays only the records after it and equals the replay from zero', async (t) => {
  const dir = await scratchDir(t, 'runlog-snapshots-');
  const clock = new FakeClock();
  const first = await open(t, dir, clock);
  await work(first.queue, clock, 20);
  const metrics = await first.queue.metrics();
  await first.queue.stop();
  assert.equal((await snapshotFiles(dir)).length, 1);

  const second = await open(t, dir, clock);
  assert.deepEqual(second.warnings, []);
  await assertEqualsReplay(second.queue);
  assert.deepEqual({ ...(await second.queue.metrics()), warnings: {} }, { ...metrics, warnings: {} });
  // More work, then the log closed without a stop (no snapshot of it): the next open replays just that tail.
  await work(second.queue, clock, 6, 'tail');
  const end = await second.queue.log.endOffset(0);
  const snapshotAt = decodeSnapshot(await readFile((await snapshotFiles(dir))[0]!)).nextOffset;
  await second.queue.log.close();

  const log = await openFileLog({ dir, fsync: false });
  t.after(() => log.close());
  const opened = await openView(log, 0, () => assert.fail('no warning expected'));
  assert.match(opened.snapshot ?? '', new RegExp(`/${snapshotAt.toString().padStart(20, '0')}-[0-9a-f]{16}\\.snapshot$`));
  assert.equal(BigInt(opened.replayed), end - snapshotAt, 'only the tail is replayed');
  assert.deepEqual(snapshotView(opened.view), snapshotView(await replayPartition(log, 0)));
});

/** Opens the log in `dir` through a queue and checks the one snapshot there was ignored, saying `why`. */
async function assertIgnored(t: TestContext, dir: string, clock: FakeClock, why: RegExp): Promise<void> {
  const { queue, warnings } = await open(t, dir, clock, { snapshots: false });
  const ignored = warnings.filter((w) => w.code === SNAPSHOT_IGNORED);
  assert.equal(ignored.length, 1, JSON.stringify(warnings));
  assert.match(ignored[0]!.message, why);
  await assertEqualsReplay(queue);
  assert.ok((await queue.metrics()).open > 0);
}

test('a torn snapshot and a damaged one are ignored: the queue replays from zero', async (t) => {
  const clock = new FakeClock();
  for (const [damage, why] of [
    [(path: string) => truncate(path, 100), /truncated|invalid/],
    [
      async (path: string) => {
        const bytes = await readFile(path);
        bytes[bytes.length - 40]! ^= 0x10; // inside the state: only the checksum can tell
        await writeFile(path, bytes);
      },
      /checksum/,
    ],
    [(path: string) => writeFile(path, ''), /header/],
  ] as const) {
    const dir = await scratchDir(t, 'runlog-snapshots-torn-');
    const { queue } = await open(t, dir, clock);
    await work(queue, clock, 9);
    await queue.stop();
    const [path] = await snapshotFiles(dir);
    await damage(path!);
    await assertIgnored(t, dir, clock, why);
  }
});

test('a snapshot of another log is ignored, though its partition and offsets would fit', async (t) => {
  const clock = new FakeClock();
  const [dirA, dirB] = [await scratchDir(t, 'runlog-snapshots-a-'), await scratchDir(t, 'runlog-snapshots-b-')];
  for (const dir of [dirA, dirB]) {
    const { queue } = await open(t, dir, clock);
    await work(queue, clock, 10);
    await queue.stop();
  }
  const [fromA] = await snapshotFiles(dirA);
  const [ofB] = await snapshotFiles(dirB);
  await rm(ofB!);
  await cp(fromA!, ofB!);
  await assertIgnored(t, dirB, clock, /another log/);
});

/** A log of 6 entries and no snapshot, and a copy of its directory: the same log id, the same records so far. */
async function logAndItsCopy(t: TestContext, clock: FakeClock, names: [string, string]): Promise<{ dir: string; copy: string }> {
  const dir = await scratchDir(t, `runlog-snapshots-${names[0]}-`);
  const copy = await scratchDir(t, `runlog-snapshots-${names[1]}-`);
  const first = await open(t, dir, clock, { snapshots: false });
  await work(first.queue, clock, 6);
  await first.queue.stop();
  await cp(dir, copy, { recursive: true });
  return { dir, copy };
}

test("a snapshot past the log's end (the log was replaced by an older copy of itself) is ignored", async (t) => {
  const clock = new FakeClock();
  const { dir, copy: backup } = await logAndItsCopy(t, clock, ['live', 'backup']);
  const second = await open(t, dir, clock);
  await work(second.queue, clock, 6, 'later');
  await second.queue.stop();
  const [later] = await snapshotFiles(dir);
  const copied = join(backup, 'snapshots', 'partition-0', later!.split('/').at(-1)!);
  await cp(later!, copied);
  await assertIgnored(t, backup, clock, /past the log's end.*removed/);
  // Removed: once the log grows past its offset again (other records), nothing is left to trust.
  assert.ok(!(await snapshotFiles(backup)).includes(copied), 'the snapshot past the end is gone');
});

test('a snapshot of a copy of the log directory that went on differently is ignored: the record it was taken after is not there', async (t) => {
  const clock = new FakeClock();
  const { dir, copy } = await logAndItsCopy(t, clock, ['original', 'copy']);
  const copied = await open(t, copy, clock);
  await work(copied.queue, clock, 6, 'copy');
  await copied.queue.stop();
  const original = await open(t, dir, clock, { snapshots: false });
  await work(original.queue, clock, 10, 'original'); // further than the copy: its snapshot is not past this log's end
  await original.queue.stop();
  const [taken] = await snapshotFiles(copy);
  await cp(taken!, join(dir, 'snapshots', 'partition-0', taken!.split('/').at(-1)!));
  await assertIgnored(t, dir, clock, /another record there.*another copy of this log/);
});

test("snapshots that cannot be listed (a file where the partition's snapshot directory should be) are ignored: the queue replays from zero", async (t) => {
  const clock = new FakeClock();
  const dir = await scratchDir(t, 'runlog-snapshots-unlisted-');
  const first = await open(t, dir, clock, { snapshots: false });
  await work(first.queue, clock, 6);
  await first.queue.stop();
  await mkdir(join(dir, 'snapshots'), { recursive: true });
  await writeFile(join(dir, 'snapshots', 'partition-0'), 'not a directory');
  await assertIgnored(t, dir, clock, /cannot be listed.*ENOTDIR/);
});

test('a snapshot from before a compaction that dropped tombstones is ignored; trusted, it would hold pruned entries', async (t) => {
  const clock = new FakeClock();
  const dir = await scratchDir(t, 'runlog-snapshots-stale-');
  const { queue } = await open(t, dir, clock, { snapshots: false });
  await work(queue, clock, 8);
  await queue.log.snapshots!.save(0, await snapshotBytes(queue), queue.views()[0]!.nextOffset); // the snapshot, now
  const old = await readFile((await snapshotFiles(dir))[0]!);
  clock.advance(1_000);
  // Two prunes: the second EntriesPruned supersedes the first, so compaction keeps only the second
  // and the first one's tombstones are the only records left naming its entries, until compaction drops them.
  assert.equal(await queue.prune(0, 2), 2);
  assert.ok((await queue.prune(0, 100)) > 0);
  await queue.log.compact(0);
  await queue.stop();

  // Trusted anyway, the old snapshot plus the compacted tail would still hold the pruned entries.
  const log = await openFileLog({ dir, fsync: false });
  const snapshot = decodeSnapshot(old);
  const trusted = restoreView(0, decodeSnapshotState(snapshot.state), snapshot.nextOffset);
  await catchUp(log, 0, trusted);
  const replayed = await replayPartition(log, 0);
  assert.ok(
    trusted.entries.size + trusted.closed.size > replayed.entries.size + replayed.closed.size,
    'the compaction dropped the tombstones the old snapshot needed',
  );
  await log.close();

  await assertIgnored(t, dir, clock, /stale: a compaction ran up to offset/);
});

async function snapshotBytes(queue: RunQueue): Promise<Uint8Array> {
  const { saveSnapshot } = await import('../../src/projector/snapshots.ts');
  await saveSnapshot(queue.log, queue.views()[0]!);
  return readFile((await snapshotFiles(dirOf(queue)))[0]!);
}

function dirOf(queue: RunQueue): string {
  return (queue.log.snapshots as unknown as { dir: string }).dir;
}

test('pruned tickets read TicketExpired with a snapshot and without one', async (t) => {
  const clock = new FakeClock();
  const dir = await scratchDir(t, 'runlog-snapshots-expired-');
  const first = await open(t, dir, clock);
  const ids = await work(first.queue, clock, 6);
  clock.advance(1_000);
  const pruned = await first.queue.prune(0, 100);
  assert.equal(pruned, 3);
  const expired = async (queue: RunQueue): Promise<number> => {
    let count = 0;
    for (const id of ids) {
      const answer = await queue.entry('acme', id).catch((error: unknown) => error);
      if (isRunlogError(answer, 'TicketExpired')) count++;
      else assert.equal((answer as { status: string }).status, 'open');
    }
    return count;
  };
  assert.equal(await expired(first.queue), 3);
  await first.queue.stop();

  const fromSnapshot = await open(t, dir, clock);
  assert.deepEqual(fromSnapshot.warnings, []);
  assert.equal(await expired(fromSnapshot.queue), 3, 'opened from the snapshot');
  await fromSnapshot.queue.stop();

  await rm(join(dir, 'snapshots'), { recursive: true });
  const fromZero = await open(t, dir, clock, { snapshots: false });
  assert.equal(await expired(fromZero.queue), 3, 'replayed from zero');
});

test('a snapshot is taken every everyRecords records, while the queue runs', async (t) => {
  const clock = new FakeClock();
  const dir = await scratchDir(t, 'runlog-snapshots-every-');
  const { queue } = await open(t, dir, clock, { snapshots: { everyRecords: 10 } });
  await work(queue, clock, 12);
  // Each command waits for its append: the partition is idle after each, so a due snapshot is taken
  // then, and saved in the background (a temp file, fsync, rename): wait for the renamed file, not
  // for the directory, which exists as soon as the temp file is being written.
  const files = await eventually(() => snapshotFiles(dir).catch(() => []));
  assert.ok(files.length >= 1);
  const taken = decodeSnapshot(await readFile(files.at(-1)!));
  assert.ok(taken.nextOffset >= 10n);
  assert.ok(taken.nextOffset <= (await queue.log.endOffset(0)));
});

test("a cluster node's acquire opens the partition from its snapshot and the records after it", async (t) => {
  const clock = new FakeClock();
  const dir = await scratchDir(t, 'runlog-snapshots-acquire-');
  const first = await open(t, dir, clock);
  await work(first.queue, clock, 10);
  await first.queue.stop(); // the snapshot
  const second = await open(t, dir, clock, { snapshots: false });
  await work(second.queue, clock, 4, 'tail'); // records after it
  await second.queue.stop();

  const node = await open(t, dir, clock, { ownership: 'assigned' });
  await node.queue.acquire(0);
  assert.deepEqual(node.warnings, []);
  const covered = snapshotCovers(node.queue.views()[0]!);
  assert.ok(covered !== null && covered < (await node.queue.log.endOffset(0)), 'opened from the snapshot, then the tail');
  await assertEqualsReplay(node.queue);
  assert.equal((await node.queue.entry('acme', (await node.queue.openEntries('acme', 'tail0'))[0]!.entryId)).status, 'open');
});
