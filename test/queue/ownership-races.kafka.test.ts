/**
 * Races at the ownership seam on the real broker: queues with ownership 'assigned' on one
 * topic, as cluster nodes, acquiring and releasing partitions while commands are in flight.
 * What must hold: never two writers acknowledging on one partition (a queue's acquire fences
 * whoever wrote before, also after an acquire of its own that failed); every acknowledged write
 * is in the view of the next owner; a command caught by a handover fails retriably; stopping a
 * queue during an acquire leaves no connection behind. Faults by wrapping the real logs.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import { isRunlogError, type RunlogError } from '../../src/errors.ts';
import type { AppendRecord, EventLog } from '../../src/log/event-log.ts';
import { openKafkaLog } from '../../src/log/kafka/kafka-log.ts';
import { partitionOf } from '../../src/log/partitioner.ts';
import { replayPartition } from '../../src/projector/replay.ts';
import { openRunQueueOnLog } from '../../src/queue/open-run-queue.ts';
import type { RunQueue } from '../../src/queue/run-queue.ts';
import { submitOf } from '../contract/fixtures.ts';
import { kafkaBrokers, openTestKafkaLog, uniqueTopic } from '../log/kafka-test-support.ts';
import { runChildUntilExit } from '../support/child-exit.ts';
import { onCleanup } from '../support/cleanup.ts';
import { snapshotView } from '../support/snapshot-view.ts';
import { wrapLog } from '../support/wrap-log.ts';
import { FaultyLog } from './faulty-log.ts';

const PARTITIONS = 2;

function threadsOn(partition: number, count: number): string[] {
  const threads: string[] = [];
  for (let i = 0; threads.length < count; i++) if (partitionOf('acme', `t${i}`, PARTITIONS) === partition) threads.push(`t${i}`);
  return threads;
}

/** A fresh topic (deleted after the test) for queues opened by `node`. */
async function freshTopic(t: TestContext): Promise<string> {
  const topic = uniqueTopic('runlog-ownership-races');
  await openTestKafkaLog(t, PARTITIONS, { topic });
  return topic;
}

/** A node: an assigned queue on its own Kafka log of `topic`, the log first passed through `wrap` (faults, probes). */
async function node(t: TestContext, topic: string, wrap: (log: EventLog & { claim(p: number): Promise<void> }) => EventLog = (l) => l) {
  const log = await openKafkaLog({ brokers: kafkaBrokers(), topic, partitions: PARTITIONS });
  const queue = await openRunQueueOnLog(wrap(log), { ownership: 'assigned', onWarning: () => {} });
  onCleanup(t, () => queue.stop());
  return queue;
}

/** The log's claim and release kept (a wrapper leaves the optional parts out unless given them). */
function withOwnership(log: EventLog & { claim(p: number): Promise<void> }, wrapped: EventLog): EventLog {
  return {
    ...wrapped,
    appendsInFlight: log.appendsInFlight!,
    claim: (p: number) => log.claim(p),
    release: (p: number) => log.release!(p),
  };
}

function retriable(error: unknown): error is RunlogError {
  return isRunlogError(error) && error.retriable;
}

describe('the ownership seam under races (Kafka)', () => {
  it('an acquire after a failed one fences the node that claimed the partition in between', async (t) => {
    const topic = await freshTopic(t);
    let faults!: FaultyLog;
    const a = await node(t, topic, (log) => {
      faults = new FaultyLog(log);
      return withOwnership(log, faults.wrap());
    });
    const b = await node(t, topic);
    const [thread] = threadsOn(0, 1) as [string];

    faults.unreadable = true; // a's claim goes through, its replay fails
    await assert.rejects(a.acquire(0), (e: unknown) => isRunlogError(e, 'LogUnavailable'));
    faults.unreadable = false;
    assert.equal((await a.health())[0]!.mode, 'unowned');
    await b.acquire(0); // fences a's writer
    const first = await b.submit(submitOf('acme', thread));

    await a.acquire(0); // must fence b in turn
    assert.deepEqual(
      (await a.openEntries('acme', thread)).map((e) => e.entryId),
      [first.entryId],
    );
    await assert.rejects(b.submit(submitOf('acme', thread)), retriable, 'b acknowledged a submit after a acquired the partition');
    const second = await a.submit(submitOf('acme', thread));
    const replayed = await replayPartition(a.log, 0);
    assert.deepEqual([...replayed.entries.keys()].sort(), [first.entryId, second.entryId].sort());
  });

  it('a command whose append another node fences fails retriably, and nothing of it is acknowledged', async (t) => {
    const topic = await freshTopic(t);
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    let holding = false;
    const a = await node(t, topic, (log) =>
      withOwnership(
        log,
        wrapLog(log, {
          append: async (partition: number, records: readonly AppendRecord[]) => {
            if (holding) await gate;
            return log.append(partition, records);
          },
        }),
      ),
    );
    const b = await node(t, topic);
    const [thread] = threadsOn(0, 1) as [string];
    await a.acquire(0);
    const before = await a.submit(submitOf('acme', thread));

    holding = true;
    const inFlight = a.submit(submitOf('acme', thread, { input: 'in flight' }));
    inFlight.catch(() => {});
    await b.acquire(0); // claims while a's append waits
    open();
    const failure = await inFlight.then(
      (ticket) => assert.fail(`acknowledged after another node acquired the partition: ${ticket.entryId}`),
      (error: unknown) => error,
    );
    assert.ok(retriable(failure), `expected a retriable refusal, got ${String(failure)}`);
    assert.notEqual(failure.code, 'Fenced');
    await assert.rejects(a.submit(submitOf('acme', thread)), (e: unknown) => isRunlogError(e, 'NotOwner') && e.retriable);
    assert.deepEqual(
      (await b.openEntries('acme', thread)).map((e) => e.entryId),
      [before.entryId],
    );
  });

  it('stopping a queue while it acquires a partition leaves no Kafka connection behind (the process exits)', async (t) => {
    const topic = await freshTopic(t);
    // A hang is the failure: a process kept alive by a connection nobody closes never exits.
    const limitMs = 90_000;
    const { code, signal, output } = await runChildUntilExit(join(import.meta.dirname, 'stop-while-acquiring-child.ts'), [topic], limitMs);
    t.diagnostic(`child: ${output.trim()}`);
    assert.match(output, /^stopped; the acquire (resolved|rejected RunlogError)/);
    assert.equal(signal, null, `the child did not exit within ${limitMs / 1000} s after stopping: a Kafka connection was left open`);
    assert.equal(code, 0);
  });

  it('three nodes racing acquire and release under load: one acknowledging writer, every acknowledged submit in the next view', async (t) => {
    const topic = await freshTopic(t);
    const started = performance.now();
    const at = (): number => performance.now() - started;
    /** Every claim a node's log made (acquires and rebuilds), with when it started and ended. */
    const claims: { node: number; partition: number; start: number; end: number }[] = [];
    const nodes: RunQueue[] = [];
    for (let n = 0; n < 3; n++) {
      nodes.push(
        await node(t, topic, (log) =>
          wrapLog(log, {
            appendsInFlight: log.appendsInFlight!,
            release: (p: number) => log.release!(p),
            claim: async (partition: number) => {
              const claim = { node: n, partition, start: at(), end: Number.POSITIVE_INFINITY };
              claims.push(claim);
              try {
                await log.claim(partition);
              } finally {
                claim.end = at();
              }
            },
          }),
        ),
      );
    }
    const acks: { node: number; partition: number; entryId: string; at: number }[] = [];
    const acquired: { node: number; partition: number; start: number; at: number; seen: Set<string> }[] = [];
    const refusals = new Map<string, number>();
    const notRetriable: string[] = [];
    let running = true;

    const submitter = async (n: number, partition: number, thread: string): Promise<void> => {
      for (let i = 0; running; i++) {
        try {
          const ticket = await nodes[n]!.submit(submitOf('acme', thread, { input: `${n}-${thread}-${i}` }));
          acks.push({ node: n, partition, entryId: ticket.entryId, at: at() });
        } catch (error) {
          const code = isRunlogError(error) ? error.code : String(error);
          refusals.set(code, (refusals.get(code) ?? 0) + 1);
          if (!retriable(error)) notRetriable.push(`node ${n}: ${String(error)}`);
          await new Promise((resolve) => setTimeout(resolve, 5));
        }
      }
    };
    const chaos = async (seed: number): Promise<void> => {
      let state = seed;
      const next = (n: number): number => ((state = (state * 1103515245 + 12345) % 2 ** 31), state % n);
      for (let step = 0; step < 40; step++) {
        const n = next(3);
        const partition = next(PARTITIONS);
        const queue = nodes[n]!;
        if (next(100) < 55) {
          const start = at();
          try {
            await queue.acquire(partition);
            if ((await queue.health())[partition]!.mode === 'serving')
              acquired.push({ node: n, partition, start, at: at(), seen: new Set(queue.views()[partition]!.entries.keys()) });
          } catch (error) {
            if (!retriable(error) && !isRunlogError(error, 'Fenced')) notRetriable.push(`acquire on node ${n}: ${String(error)}`);
          }
        } else {
          await queue.release(partition);
        }
        await new Promise((resolve) => setTimeout(resolve, next(200)));
      }
    };
    const submitters = nodes.flatMap((_, n) =>
      Array.from({ length: PARTITIONS }, (_, p) => threadsOn(p, 3).map((thread) => submitter(n, p, thread))).flat(),
    );
    await Promise.all([chaos(7), chaos(11)]);
    running = false;
    await Promise.all(submitters);
    t.diagnostic(
      `${acks.length} submits acknowledged, ${acquired.length} acquires, ${claims.length} claims; refusals ${JSON.stringify([...refusals])}`,
    );

    assert.equal(
      notRetriable.length,
      0,
      `${notRetriable.length} refusals during the handovers not retriable, the first: ${notRetriable[0]}`,
    );
    // Only acquires that claimed (one of a partition served already does nothing), from their claim's start.
    const claimed = acquired.flatMap((acquire) => {
      const claim = claims.find(
        (c) => c.node === acquire.node && c.partition === acquire.partition && c.start >= acquire.start && c.end <= acquire.at,
      );
      return claim === undefined ? [] : [{ ...acquire, start: claim.start }];
    });
    for (const acquire of claimed) {
      // Whatever was acknowledged before its claim began is in its replay.
      for (const ack of acks.filter((a) => a.partition === acquire.partition && a.at < acquire.start)) {
        assert.ok(acquire.seen.has(ack.entryId), `node ${acquire.node} acquired partition ${acquire.partition} without ${ack.entryId}`);
      }
      // Acknowledged by another node after this acquire, though that node claimed nothing since before it: two writers.
      for (const ack of acks.filter((a) => a.partition === acquire.partition && a.node !== acquire.node && a.at > acquire.at)) {
        if (acquire.seen.has(ack.entryId)) continue;
        const claimedSince = claims.some(
          (c) => c.node === ack.node && c.partition === ack.partition && c.end >= acquire.start && c.start < ack.at,
        );
        assert.ok(
          claimedSince,
          `node ${ack.node} acknowledged ${ack.entryId} after node ${acquire.node} acquired partition ${ack.partition}`,
        );
      }
    }
    const health = await Promise.all(nodes.map(async (queue) => (await queue.health()).map((h) => h.mode)));
    for (let p = 0; p < PARTITIONS; p++) {
      for (const [n, modes] of health.entries()) {
        assert.ok(['serving', 'unowned'].includes(modes[p]!), `partition ${p} is stuck ${modes[p]} on node ${n}`);
      }
    }
    // Each node's acknowledged submits are read back through that node's own log: a read_committed
    // reader sees another process's append only once its commit marker has landed, which the broker
    // writes after the commit was acknowledged (a moment later, or seconds under load), while a log
    // reads its own appends once their markers landed (read-your-writes.ts). Read through node 0's log
    // alone, another node's last acknowledged submits can look lost: the likely cause of one failure
    // (7 of node 2's submits on partition 0, at load 20; not reproduced since).
    const final = await Promise.all(
      nodes.map((queue) => Promise.all(Array.from({ length: PARTITIONS }, (_, p) => replayPartition(queue.log, p)))),
    );
    const lost = acks.filter((ack) => !final[ack.node]![ack.partition]!.entries.has(ack.entryId));
    assert.deepEqual(lost, [], 'every acknowledged submit is in the log');
    // Whoever serves a partition last: its view is what a replay makes of the log, once it has written again.
    for (let p = 0; p < PARTITIONS; p++) {
      for (const [n, modes] of health.entries()) {
        if (modes[p] !== 'serving') continue;
        try {
          await nodes[n]!.submit(submitOf('acme', threadsOn(p, 1)[0]!, { input: 'last' }));
        } catch (error) {
          assert.ok(retriable(error), String(error)); // fenced by a later claim: no longer the owner
          continue;
        }
        assert.deepEqual(snapshotView(nodes[n]!.views()[p]!), snapshotView(await replayPartition(nodes[n]!.log, p)));
      }
    }
  });
});
