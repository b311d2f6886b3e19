/**
 * The client against a cluster (cluster-fixtures.ts: real servers, each over its own
 * RunQueue with ownership 'assigned', on one topic of the real Kafka broker, partitions
 * assigned by hand): connected to any one node, every call reaches its partition's owner; a
 * partition moved mid-run (released by one node, claimed by another) is followed without
 * the caller seeing it; a Worker connected to one node gets work from every partition, and
 * from a node that joins later.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { connect, type RemoteQueue } from '../../src/client/index.ts';
import { isRunlogError } from '../../src/errors.ts';
import { partitionOfEntryId } from '../../src/queue/entry-id.ts';
import type { RunQueueApi } from '../../src/queue/types.ts';
import { Worker } from '../../src/worker/worker.ts';
import { submitOf } from '../contract/fixtures.ts';
import { onCleanup } from '../support/cleanup.ts';
import { TestCluster, threadOn, type TestNode } from './cluster-fixtures.ts';

const take = { agents: ['build'], holder: 'w', ttlMs: 60_000 };

/** A client of the cluster (its warnings kept: a node leaving fails its work stream until the map drops it). */
async function connected(t: Parameters<typeof onCleanup>[0], url: string | string[], mapRefreshMs = 60_000): Promise<RemoteQueue> {
  const client = await connect({ url, mapRefreshMs, onWarning: () => {} });
  onCleanup(t, () => client.stop());
  return client;
}

async function isNotOwner(action: Promise<unknown>): Promise<boolean> {
  return action.then(
    () => false,
    (error: unknown) => isRunlogError(error, 'NotOwner'),
  );
}

/** Handler starts by entry id (performance.now()), and Workers that record them. */
class StartRecorder {
  readonly #started = new Map<string, number>();
  readonly #waiters = new Map<string, () => void>();

  /** A Worker of `build` over `queue` that records its starts; stop() ends it (also after the test). */
  worker(t: Parameters<typeof onCleanup>[0], queue: RunQueueApi): { stop(): Promise<void> } {
    const worker = new Worker(queue, { concurrency: 4, pollMs: 60_000, logger: () => {} });
    worker.handle('build', ({ entry }) => {
      this.#started.set(entry.entryId, performance.now());
      this.#waiters.get(entry.entryId)?.();
    });
    const signal = new AbortController();
    const running = worker.run(signal.signal);
    const stop = async (): Promise<void> => {
      signal.abort();
      await running;
    };
    onCleanup(t, stop);
    return { stop };
  }

  /** Resolves with the start time of the ticket's entry. */
  of(ticket: { entryId: string }): Promise<number> {
    return new Promise((resolve) => {
      const done = (): void => resolve(this.#started.get(ticket.entryId)!);
      if (this.#started.has(ticket.entryId)) done();
      else this.#waiters.set(ticket.entryId, done);
    });
  }

  /** 20 submits on node `on` (its partitions 1 and 4), one at a time: submit to start, and answer to start. */
  async measure(on: TestNode, prefix: string): Promise<{ total: string; acked: string }> {
    const [total, acked]: [number[], number[]] = [[], []];
    for (let i = 0; i < 20; i++) {
      const before = performance.now();
      const ticket = await on.queue.submit(submitOf('acme', threadOn(i % 2 === 0 ? 1 : 4, 6, `${prefix}${i}-`)));
      const durable = performance.now();
      const start = await this.of(ticket);
      total.push(start - before);
      acked.push(start - durable);
    }
    return { total: percentiles(total), acked: percentiles(acked) };
  }
}

function percentiles(ms: number[]): string {
  const sorted = [...ms].sort((x, y) => x - y);
  const at = (q: number): string => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!.toFixed(1);
  return `p50 ${at(0.5)} ms, p90 ${at(0.9)} ms, max ${at(1)} ms`;
}

describe('the client of a cluster', () => {
  it("reaches each partition's owner from whichever node it connected to", async (t) => {
    const cluster = await TestCluster.start(t, { nodes: 3, partitions: 6 });
    const others = (owner: TestNode) => cluster.nodes.filter((n) => n !== owner);
    let submitted = 0;
    for (const [i, first] of cluster.nodes.entries()) {
      const client = await connected(t, first.url);
      assert.deepEqual(
        (await client.health()).map((h) => h.mode),
        Array(6).fill('serving'),
      );
      const tickets = [];
      for (let p = 0; p < 6; p++) {
        const thread = threadOn(p, 6, `via${i}-`);
        const ticket = await client.submit(submitOf('acme', thread, { key: 'k' }));
        submitted++;
        assert.equal(partitionOfEntryId(ticket.entryId, 6), p);
        const owner = cluster.ownerOf(p);
        assert.equal((await owner.queue.entry('acme', ticket.entryId)).status, 'open', `partition ${p}'s entry is on its owner`);
        for (const other of others(owner)) assert.ok(await isNotOwner(other.queue.entry('acme', ticket.entryId)));
        assert.equal((await client.entry('acme', ticket.entryId)).thread, thread);
        assert.deepEqual(
          (await client.openEntries('acme', thread)).map((e) => e.entryId),
          [ticket.entryId],
        );
        assert.equal((await client.submit(submitOf('acme', thread, { key: 'k' }))).created, false, 'a keyed submit names its entry');
        tickets.push(ticket);
      }
      // take asks every node: six takes lease the six heads, one per partition, then nothing.
      const leased = [];
      for (let n = 0; n < 6; n++) leased.push((await client.take(take))!);
      assert.deepEqual(leased.map((l) => partitionOfEntryId(l.entry.entryId, 6)).sort(), [0, 1, 2, 3, 4, 5]);
      assert.equal(await client.take(take), null);
      const waits = tickets.map((ticket) => client.awaitClosed('acme', ticket.entryId, { timeoutMs: 60_000 }));
      for (const { lease } of leased) {
        await client.startAttempt(lease, `run-${lease.entryId}`);
        await client.extend(lease, 60_000);
        await client.close(lease, { status: 'succeeded', result: 'ok' });
      }
      assert.deepEqual(
        (await Promise.all(waits)).map((e) => e?.outcome),
        Array(6).fill('succeeded'),
      );
      for (let p = 0; p < 6; p++) {
        const thread = threadOn(p, 6, `cancel${i}-`);
        const ticket = await client.submit(submitOf('acme', thread));
        submitted++;
        assert.equal((await client.cancel('acme', ticket.entryId, 'no')).outcome, 'cancelled');
        const doomed = await client.submit(submitOf('acme', thread));
        submitted++;
        assert.equal(await client.deleteThread('acme', thread), 1, "deleteThread closes the thread's open entry");
        assert.equal((await cluster.ownerOf(p).queue.entry('acme', doomed.entryId)).status, 'closed', 'on its owner');
      }
      const later = cluster.ownerOf(4).queue.now() + 3_600_000;
      await client.submit(submitOf('acme', threadOn(4, 6, `due${i}-`), { notBefore: later }));
      submitted++;
      const due = await cluster.ownerOf(4).queue.nextDueAt(['build']);
      assert.ok(due !== null && due <= later);
      assert.equal(await cluster.ownerOf(0).queue.nextDueAt(['build']), null);
      assert.equal(await client.nextDueAt(['build']), due, 'nextDueAt: the earliest over the nodes');
      const metrics = await client.metrics();
      assert.equal(metrics.enqueued, submitted, 'metrics: summed over the nodes');
      assert.equal(metrics.succeeded, 6 * (i + 1));
      const alone = await cluster.ownerOf(0).queue.metrics();
      assert.ok(alone.enqueued < metrics.enqueued, 'one node counts only its partitions');
    }
    // A take with a wait: woken by work on a node the client did not connect to.
    const client = await connected(t, cluster.nodes[0]!.url);
    const ticks = { agents: ['tick'], holder: 'w', ttlMs: 60_000 };
    assert.equal(await client.take(ticks, { waitMs: 300 }), null, 'nothing comes: null once the wait is over');
    const waiting = client.take(ticks, { waitMs: 60_000 });
    await new Promise((resolve) => setTimeout(resolve, 300));
    const tick = await cluster.ownerOf(2).queue.submit({ ...submitOf('acme', threadOn(2, 6, 'tick-')), agent: 'tick' });
    assert.equal((await waiting)?.entry.entryId, tick.entryId);
  });

  it('follows a partition moved mid-run: NotOwner naming the new owner, or none while it moves; a wait re-resolves', async (t) => {
    const cluster = await TestCluster.start(t, { nodes: 2, partitions: 2 });
    const [a, b] = cluster.nodes as [TestNode, TestNode];
    const client = await connected(t, a.url); // the map is read once here: only refusals make it read again
    const thread = threadOn(0, 2);
    const first = await client.submit(submitOf('acme', thread));
    const waiting = client.awaitClosed('acme', first.entryId, { timeoutMs: 60_000 });
    await new Promise((resolve) => setTimeout(resolve, 200)); // the wait is at a
    const refusedBefore = a.statuses.filter((s) => s === 421).length;

    await cluster.move(0, b, { announced: true });
    const second = await client.submit(submitOf('acme', thread)); // unkeyed: sent again only because a refused it
    assert.ok(a.statuses.filter((s) => s === 421).length > refusedBefore, 'a refused with NotOwner, and the client followed');
    assert.deepEqual(
      (await b.queue.openEntries('acme', thread)).map((e) => e.entryId),
      [first.entryId, second.entryId],
    );
    const taken = (await client.take(take))!;
    assert.equal(taken.entry.entryId, first.entryId);
    await client.close(taken.lease, { status: 'succeeded' });
    assert.equal((await waiting)?.outcome, 'succeeded', 'the wait moved from a to b with the partition');

    // Back to a, the map naming no owner meanwhile: the client waits and reads the map again.
    const waitingAgain = client.awaitClosed('acme', second.entryId, { timeoutMs: 60_000 });
    await new Promise((resolve) => setTimeout(resolve, 200));
    const moving = cluster.move(0, a, { announced: false, gapMs: 500 });
    const third = await client.submit(submitOf('acme', thread));
    await moving;
    assert.deepEqual(
      (await a.queue.openEntries('acme', thread)).map((e) => e.entryId),
      [second.entryId, third.entryId],
    );
    const next = (await client.take(take))!;
    assert.equal(next.entry.entryId, second.entryId);
    await client.close(next.lease, { status: 'failed', error: 'no' });
    assert.equal((await waitingAgain)?.outcome, 'failed');
    assert.equal((await client.entry('acme', third.entryId)).status, 'open');
    assert.deepEqual(
      (await client.health()).map((h) => h.mode),
      ['serving', 'serving'],
    );
  });

  it('a Worker connected to one node runs the work of every partition, and of a node that joins later', async (t) => {
    const cluster = await TestCluster.start(t, { nodes: 3, partitions: 6 });
    const [a, b] = cluster.nodes as [TestNode, TestNode, TestNode];
    const client = await connected(t, a.url, 200);
    const starts = new StartRecorder();
    const remote = starts.worker(t, client);

    // One entry on each partition, submitted on its owner (in its process): all run.
    const tickets = await Promise.all(
      Array.from({ length: 6 }, (_, p) => cluster.ownerOf(p).queue.submit(submitOf('acme', threadOn(p, 6, 'all-')))),
    );
    await Promise.all(tickets.map((ticket) => starts.of(ticket)));

    // A node joins and is given partition 5: the Worker's client reads the map, listens to it and takes there.
    const c = await cluster.addNode();
    await cluster.move(5, c, { announced: true });
    await starts.of(await c.queue.submit(submitOf('acme', threadOn(5, 6, 'joined-'))));
    // It goes away while it owns partition 5 (its server first, then the partition moves to b): a
    // submit meanwhile finds no one listening (the connection refused, or a kept-alive one reset:
    // it has a key, so it may be repeated), and is sent again, the map read again, until b serves
    // it. The work goes on.
    await c.server.close();
    const submitting = client.submit(submitOf('acme', threadOn(5, 6, 'gone-'), { key: 'gone' }));
    await new Promise((resolve) => setTimeout(resolve, 300));
    await cluster.move(5, b, { announced: true });
    await cluster.removeNode(c);
    const whileGone = await submitting;
    assert.equal((await b.queue.entry('acme', whileGone.entryId)).thread, threadOn(5, 6, 'gone-'), 'it was made on b');
    await starts.of(whileGone);
    const afterLeave = await b.queue.submit(submitOf('acme', threadOn(5, 6, 'left-')));
    await starts.of(afterLeave);
    assert.equal((await client.awaitClosed('acme', afterLeave.entryId, { timeoutMs: 60_000 }))?.outcome, 'succeeded');

    // The bound: from a submit on a partition b owns to the Worker (connected to a only) starting it;
    // then, for comparison, a Worker in b's own process (no HTTP, no client) on the same partitions.
    const viaA = await starts.measure(b, 'via-a');
    await remote.stop();
    await starts.worker(t, b.queue);
    const inB = await starts.measure(b, 'in-b');
    t.diagnostic(`submit on node b to its start on a Worker connected to node a only (20 runs): ${viaA.total}`);
    t.diagnostic(`  of which from the submit's answer (durable on b) to the start: ${viaA.acked}`);
    t.diagnostic(`the same with a Worker in node b's process: ${inB.total}; from the answer: ${inB.acked}`);
  });
});
