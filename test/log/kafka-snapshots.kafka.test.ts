/**
 * Snapshots on Kafka (the compacted `<topic>.snapshots` topic), against the real broker, each
 * test on topics of its own: a queue opens from its latest snapshot and replays only the records
 * after it, equal to a replay from zero; a snapshot of another topic (also an earlier topic of the
 * same name), one past the partition's end, a damaged one and a stale one (older than the topic's
 * delete.retention.ms) are each ignored with RUNLOG_SNAPSHOT_IGNORED and the queue replays from
 * zero (or from the older snapshot); trusted anyway, a snapshot from before the broker's cleaner
 * dropped tombstones would hold pruned entries (shown on a topic compacting fast); a snapshot larger than the topic's max.message.bytes is split across records and read
 * back whole; a save the broker refuses is a RUNLOG_SNAPSHOT_FAILED warning, never the queue's
 * failure; a cluster node's acquire opens the partition from its snapshot.
 */
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import kafkajs from 'kafkajs';
import { isDeepStrictEqual } from 'node:util';
import { decodeSnapshot, decodeSnapshotState, encodeSnapshot } from '../../src/events/snapshot-codec.ts';
import { restoreView } from '../../projections/view-snapshot.ts';
import { openKafkaLog, type KafkaEventLog, type KafkaLogOptions } from '../../src/log/kafka/kafka-log.ts';
import { KafkaSnapshotStore } from '../../src/log/kafka/snapshot-store.ts';
import { catchUp, replayPartition } from '../../src/projector/replay.ts';
import { openView, saveSnapshot, SNAPSHOT_IGNORED, snapshotCovers } from '../../src/projector/snapshots.ts';
import { openRunQueueOnLog } from '../../src/queue/open-run-queue.ts';
import type { RunQueue } from '../../src/queue/run-queue.ts';
import type { RunQueueOptions } from '../../src/queue/types.ts';
import type { RunlogWarning } from '../../src/warnings.ts';
import { FakeClock } from '../contract/fixtures.ts';
import { onCleanup } from '../support/cleanup.ts';
import { snapshotView } from '../support/snapshot-view.ts';
import { deleteTopic, kafkaBrokers, uniqueTopic } from './kafka-test-support.ts';

type Settings = Omit<RunQueueOptions, 'log' | 'partitions'>;

interface Opened {
  queue: RunQueue;
  log: KafkaEventLog;
  warnings: RunlogWarning[];
}

/** A fresh topic name, deleted (with its snapshots topic) after the test. */
function topicFor(t: TestContext): string {
  const topic = uniqueTopic('runlog-snap');
  onCleanup(t, () => deleteTopic(topic));
  return topic;
}

async function openLog(t: TestContext, topic: string, extra: Partial<KafkaLogOptions> = {}): Promise<KafkaEventLog> {
  const log = await openKafkaLog({ brokers: kafkaBrokers(), topic, partitions: 1, ...extra });
  onCleanup(t, () => log.close());
  return log;
}

async function open(
  t: TestContext,
  topic: string,
  clock: FakeClock,
  settings: Settings = {},
  extra: Partial<KafkaLogOptions> = {},
): Promise<Opened> {
  const warnings: RunlogWarning[] = [];
  const log = await openLog(t, topic, extra);
  const queue = await openRunQueueOnLog(log, { clock: clock.read, onWarning: (w) => warnings.push(w), ...settings });
  onCleanup(t, () => queue.stop());
  return { queue, log, warnings };
}

/** Submits `n` entries (inputs of `inputBytes`) and closes every other one. */
async function work(queue: RunQueue, clock: FakeClock, n: number, prefix = 'w', inputBytes = 10): Promise<void> {
  for (let i = 0; i < n; i++) {
    clock.advance(5);
    const input = `${prefix} ${i} `.padEnd(inputBytes, 'x');
    await queue.submit({ tenant: 'acme', thread: `${prefix}${i % 3}`, agent: 'build', input, key: `${prefix}-${i}` });
  }
  for (let i = 0; i < n; i += 2) {
    const taken = await queue.take({ agents: ['build'], holder: 'w', ttlMs: 1_000 });
    if (taken === null) break;
    await queue.startAttempt(taken.lease, `run-${prefix}-${i}`);
    await queue.close(taken.lease, { status: 'succeeded', result: 'done' });
  }
}

async function assertEqualsReplay(queue: RunQueue): Promise<void> {
  assert.deepEqual(snapshotView(queue.views()[0]!), snapshotView(await replayPartition(queue.log, 0)));
}

/** The snapshot store of `topic`, through a log of its own (a queue's stop closes its log). */
async function storeOf(t: TestContext, topic: string): Promise<KafkaSnapshotStore> {
  const store = (await openLog(t, topic)).snapshots;
  assert.ok(store instanceof KafkaSnapshotStore, 'the log keeps snapshots');
  return store;
}

/** The newest snapshot's bytes in `store`. */
async function newestBytes(store: KafkaSnapshotStore): Promise<Uint8Array> {
  const [newest] = await store.list(0);
  assert.ok(newest, 'a snapshot was saved');
  return newest.read();
}

/**
 * Opens a queue on `topic` with snapshots off and checks the newest snapshot was ignored, saying
 * `why`, that the view was opened from `fallback` (the older snapshot's nextOffset; null: none,
 * a replay from zero) and equals a replay.
 */
async function assertIgnored(t: TestContext, topic: string, clock: FakeClock, why: RegExp, fallback: bigint | null): Promise<void> {
  const { queue, warnings } = await open(t, topic, clock, { snapshots: false });
  const ignored = warnings.filter((w) => w.code === SNAPSHOT_IGNORED);
  assert.ok(ignored.length >= 1, JSON.stringify(warnings));
  assert.match(ignored[0]!.message, why);
  assert.equal(snapshotCovers(queue.views()[0]!), fallback, fallback === null ? 'replayed from zero' : 'opened from the older snapshot');
  await assertEqualsReplay(queue);
  assert.ok((await queue.metrics()).open > 0);
}

test('a stopped queue leaves a snapshot in <topic>.snapshots; reopened, it replays only the records after it and equals a replay from zero', async (t) => {
  const topic = topicFor(t);
  const clock = new FakeClock();
  const first = await open(t, topic, clock);
  await work(first.queue, clock, 20);
  const metrics = await first.queue.metrics();
  await first.queue.stop();
  const store = await storeOf(t, topic);
  assert.equal((await store.list(0)).length, 1);
  assert.match(store.logId, new RegExp(`^kafka:${topic}:[0-9a-f]{32}$`));

  const second = await open(t, topic, clock);
  assert.deepEqual(second.warnings, []);
  // Kafka's end counts the last transaction's commit marker: the snapshot covers every record below it.
  const covered = snapshotCovers(second.queue.views()[0]!);
  assert.ok(covered !== null && covered > 0n, 'opened from the snapshot');
  await assertEqualsReplay(second.queue);
  assert.deepEqual({ ...(await second.queue.metrics()), warnings: {} }, { ...metrics, warnings: {} });
  // More work, then the log closed without a stop (no snapshot of it): the next open replays just that tail.
  await work(second.queue, clock, 6, 'tail');
  await second.log.close();

  const log = await openLog(t, topic);
  const opened = await openView(log, 0, (w) => assert.fail(`no warning expected: ${w.message}`));
  assert.match(opened.snapshot ?? '', /covering offsets below/);
  assert.ok(opened.replayed > 0 && BigInt(opened.replayed) < (await log.endOffset(0)), 'only the tail is replayed');
  assert.deepEqual(snapshotView(opened.view), snapshotView(await replayPartition(log, 0)));
});

test('a snapshot of another topic is ignored, and so is one of an earlier topic of the same name', async (t) => {
  const clock = new FakeClock();
  const [a, b] = [topicFor(t), topicFor(t)];
  for (const topic of [a, b]) {
    const { queue } = await open(t, topic, clock);
    await work(queue, clock, 10);
    await queue.stop();
  }
  const storeB = await storeOf(t, b);
  const own = decodeSnapshot(await newestBytes(storeB)).nextOffset;
  await storeB.save(0, await newestBytes(await storeOf(t, a)), 0n); // A's snapshot, now B's newest
  await assertIgnored(t, b, clock, /another log/, own);

  // The topic deleted and created again under its name: its snapshots topic (kept) names the old topic's id.
  await deleteDataTopicOnly(a);
  const again = await open(t, a, clock, { snapshots: false });
  await work(again.queue, clock, 4, 'again');
  await again.queue.stop();
  await assertIgnored(t, a, clock, /another log/, null);
});

test("a snapshot past the partition's end is ignored", async (t) => {
  const clock = new FakeClock();
  const topic = topicFor(t);
  const { queue } = await open(t, topic, clock);
  await work(queue, clock, 6);
  await queue.stop();
  const store = await storeOf(t, topic);
  const snapshot = decodeSnapshot(await newestBytes(store));
  const beyond = snapshot.nextOffset + 1_000n;
  await store.save(0, encodeSnapshot({ ...snapshot, nextOffset: beyond }), beyond);
  await assertIgnored(t, topic, clock, /past the log's end/, snapshot.nextOffset);
});

test('a damaged snapshot is ignored (its checksum), and the one before it serves', async (t) => {
  const clock = new FakeClock();
  const topic = topicFor(t);
  const first = await open(t, topic, clock);
  await work(first.queue, clock, 9);
  await first.queue.stop(); // the good snapshot
  const store = await storeOf(t, topic);
  const good = decodeSnapshot(await newestBytes(store));
  const damaged = new Uint8Array(await newestBytes(store));
  damaged[damaged.length - 40]! ^= 0x10; // inside the state: only the checksum can tell
  await store.save(0, damaged, good.nextOffset);
  assert.equal((await store.list(0)).length, 2);

  const second = await open(t, topic, clock, { snapshots: false });
  const ignored = second.warnings.filter((w) => w.code === SNAPSHOT_IGNORED);
  assert.equal(ignored.length, 1, JSON.stringify(second.warnings));
  assert.match(ignored[0]!.message, /checksum/);
  assert.equal(snapshotCovers(second.queue.views()[0]!), good.nextOffset, 'opened from the older, good snapshot');
  await assertEqualsReplay(second.queue);

  // Torn short, with nothing older left to fall back on: replayed from zero.
  const alone = topicFor(t);
  const third = await open(t, alone, clock, { snapshots: false });
  await work(third.queue, clock, 5);
  await third.log.snapshots!.save(0, damaged.subarray(0, 100), good.nextOffset);
  await third.queue.stop();
  await assertIgnored(t, alone, clock, /truncated|invalid|corrupt/i, null);
});

test("a snapshot older than the topic's delete.retention.ms is stale and ignored; a fresh one is trusted", async (t) => {
  const clock = new FakeClock();
  const topic = topicFor(t);
  const { queue } = await open(t, topic, clock, {}, { topicConfig: { 'delete.retention.ms': '3600000' } });
  await work(queue, clock, 6);
  await queue.stop();
  const store = await storeOf(t, topic);
  const snapshot = decodeSnapshot(await newestBytes(store));
  const stale = await store.staleness(0);
  assert.equal(stale(snapshot.nextOffset, snapshot.takenAt), null);
  assert.equal(stale(snapshot.nextOffset, Date.now() - 3_000_000), null, 'within the retention less its margin');
  assert.match(stale(snapshot.nextOffset, Date.now() - 3_600_000) ?? '', /delete\.retention\.ms \(3600000 ms/);
  const takenAt = Date.now() - 2 * 3_600_000;
  await store.save(0, encodeSnapshot({ ...snapshot, takenAt }), snapshot.nextOffset);
  await assertIgnored(t, topic, clock, /stale: it was taken \d+ ms ago/, snapshot.nextOffset);
});

test('a snapshot from before the broker dropped tombstones it did not see is stale: trusted, it would hold pruned entries', async (t) => {
  const clock = new FakeClock();
  const topic = topicFor(t);
  const compactFast = {
    'segment.ms': '100',
    'min.cleanable.dirty.ratio': '0.01',
    'delete.retention.ms': '100',
    'min.compaction.lag.ms': '0',
  };
  const { queue, log } = await open(t, topic, clock, { snapshots: false }, { topicConfig: compactFast });
  await work(queue, clock, 8);
  await saveSnapshot(log, queue.views()[0]!); // the snapshot, now
  const old = decodeSnapshot(await newestBytes(log.snapshots as KafkaSnapshotStore));
  clock.advance(1_000);
  // Two prunes: the second EntriesPruned supersedes the first, so compaction keeps only the second and the
  // first one's tombstones are the only records left naming its entries, until the cleaner drops them.
  assert.equal(await queue.prune(0, 2), 2);
  assert.ok((await queue.prune(0, 100)) > 0);

  // Appending (rolling segments) until the old snapshot plus the tail no longer equals a replay from zero, bounded.
  const trustedDiffers = async (): Promise<boolean> => {
    const trusted = restoreView(0, decodeSnapshotState(old.state), old.nextOffset);
    await catchUp(log, 0, trusted);
    return !isDeepStrictEqual(snapshotView(trusted), snapshotView(await replayPartition(log, 0)));
  };
  let differs = await trustedDiffers();
  assert.equal(differs, false, 'before the cleaner ran, the old snapshot and the tail equal the replay');
  for (let i = 0, until = Date.now() + 120_000; !differs && Date.now() < until; i++) {
    await new Promise((resolve) => setTimeout(resolve, 500));
    await queue.submit({ tenant: 'acme', thread: `filler${i % 2}`, agent: 'build', input: 'x', key: `filler-${i}` });
    differs = await trustedDiffers();
  }
  assert.ok(differs, 'the broker dropped the tombstones the old snapshot needed within 120 s');
  await queue.stop();
  await assertIgnored(t, topic, clock, /stale: it was taken \d+ ms ago/, null);
});

test('a snapshot larger than the snapshots topic allows in a record is split across records and read back whole', async (t) => {
  const clock = new FakeClock();
  const topic = topicFor(t);
  await createTopic(`${topic}.snapshots`, { 'cleanup.policy': 'compact', 'max.message.bytes': '2000' });
  const first = await open(t, topic, clock);
  await work(first.queue, clock, 30, 'big', 500);
  await first.queue.stop();
  const [stored] = await (await storeOf(t, topic)).list(0);
  const records = Number(/(\d+) records/.exec(stored!.name)![1]);
  assert.ok((await stored!.read()).length > 10_000 && records > 5, stored!.name);

  const second = await open(t, topic, clock);
  assert.deepEqual(second.warnings, []);
  assert.ok(snapshotCovers(second.queue.views()[0]!) !== null, 'opened from the split snapshot');
  await assertEqualsReplay(second.queue);
  // A smaller snapshot in the other slot, then one more back in the first: the extra chunks are tombstoned.
  await second.queue.prune(0, 100);
  await second.queue.stop();
  const third = await open(t, topic, clock);
  await assertEqualsReplay(third.queue);
  assert.deepEqual(third.warnings, []);
});

test('a save the broker refuses is a RUNLOG_SNAPSHOT_FAILED warning; the queue serves on', async (t) => {
  const clock = new FakeClock();
  const topic = topicFor(t);
  await createTopic(`${topic}.snapshots`, { 'cleanup.policy': 'delete' }); // not compacted: runlog will not use it
  const first = await open(t, topic, clock);
  await work(first.queue, clock, 4);
  await first.queue.stop();
  const failed = first.warnings.filter((w) => w.code === 'RUNLOG_SNAPSHOT_FAILED');
  assert.equal(failed.length, 1, JSON.stringify(first.warnings));
  assert.match(failed[0]!.message, /cleanup\.policy=delete/);
  const second = await open(t, topic, clock);
  assert.deepEqual(second.warnings, []);
  await assertEqualsReplay(second.queue);
  assert.equal((await second.queue.metrics()).open, 2);
});

test("a cluster node's acquire opens the partition from its snapshot and the records after it", async (t) => {
  const clock = new FakeClock();
  const topic = topicFor(t);
  const first = await open(t, topic, clock);
  await work(first.queue, clock, 10);
  await first.queue.stop(); // the snapshot
  const second = await open(t, topic, clock, { snapshots: false });
  await work(second.queue, clock, 4, 'tail'); // records after it
  await second.queue.stop();

  const node = await open(t, topic, clock, { ownership: 'assigned' });
  await node.queue.acquire(0);
  assert.deepEqual(node.warnings, []);
  const covered = snapshotCovers(node.queue.views()[0]!);
  assert.ok(covered !== null && covered < (await node.log.endOffset(0)), 'opened from the snapshot, then the tail');
  await assertEqualsReplay(node.queue);
  assert.equal((await node.queue.entry('acme', (await node.queue.openEntries('acme', 'tail0'))[0]!.entryId)).status, 'open');
});

async function withAdmin<T>(body: (admin: kafkajs.Admin) => Promise<T>): Promise<T> {
  const kafka = new kafkajs.Kafka({ clientId: 'runlog-test', brokers: kafkaBrokers(), logLevel: kafkajs.logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  try {
    return await body(admin);
  } finally {
    await admin.disconnect();
  }
}

async function createTopic(topic: string, config: Record<string, string>): Promise<void> {
  await withAdmin((admin) =>
    admin.createTopics({
      waitForLeaders: true,
      topics: [{ topic, numPartitions: 1, configEntries: Object.entries(config).map(([name, value]) => ({ name, value })) }],
    }),
  );
}

/** Deletes `topic` alone, keeping its snapshots topic, and waits until the name is free again. */
async function deleteDataTopicOnly(topic: string): Promise<void> {
  await withAdmin(async (admin) => {
    await admin.deleteTopics({ topics: [topic], timeout: 10_000 });
    while ((await admin.listTopics()).includes(topic)) await new Promise((r) => setTimeout(r, 100));
  });
}
