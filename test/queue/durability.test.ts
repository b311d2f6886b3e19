/**
 * Durable before answered, checked by wrapping a real log: appends held at a gate, or
 * failing once. Commands and reads answer only after what they saw is durable; a failed
 * append loses only unanswered commands, and the partition is rebuilt from the log.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RunlogError } from '../../src/errors.ts';
import type { AppendRecord, EventLog } from '../../src/log/event-log.ts';
import { openMemoryLog } from '../../src/log/memory/memory-log.ts';
import { openRunQueueOnLog } from '../../src/queue/open-run-queue.ts';
import { assertReplayEqualsLive, FakeClock, submitOf } from '../contract/fixtures.ts';
import { wrapLog } from '../support/wrap-log.ts';

/**
 * A real log whose appends wait for `open()` and can be made to fail. As EventLog's contract
 * asks, a failure fails every append called before it was reported too: those waiting at the
 * gate behind it. `appendsInFlight` is what the wrapped log tells the queue.
 */
class GatedLog {
  private gate: Promise<void> = Promise.resolve();
  private release: () => void = () => {};
  private failing = false;
  failNext = false;
  appends = 0;

  constructor(
    readonly log: EventLog,
    private readonly appendsInFlight = 1,
  ) {}

  close(): void {
    this.gate = new Promise((resolve) => (this.release = resolve));
  }

  open(): void {
    this.release();
  }

  wrap(): EventLog {
    const append = async (partition: number, records: readonly AppendRecord[]): Promise<bigint[]> => {
      this.appends++;
      await this.gate;
      if (this.failNext || this.failing) {
        this.failNext = false;
        this.failing = true; // until the failure has been reported: the appends behind it fail too
        setImmediate(() => (this.failing = false));
        throw new RunlogError('LogUnavailable', 'injected append failure');
      }
      return this.log.append(partition, records);
    };
    return wrapLog(this.log, { appendsInFlight: this.appendsInFlight, append });
  }
}

async function settledWithin(promise: Promise<unknown>, turns: number): Promise<boolean> {
  let settled = false;
  promise.then(
    () => (settled = true),
    () => (settled = true),
  );
  for (let i = 0; i < turns && !settled; i++) await new Promise((resolve) => setImmediate(resolve));
  return settled;
}

type Queue = Awaited<ReturnType<typeof openRunQueueOnLog>>;

/** A RunQueue on a gated memory log of one partition, taking `appendsInFlight` appends at once. */
async function gatedQueue(
  t: { after: (fn: () => Promise<void>) => void },
  appendsInFlight = 1,
): Promise<{ gated: GatedLog; queue: Queue }> {
  const gated = new GatedLog(await openMemoryLog({ partitions: 1 }), appendsInFlight);
  const queue = await openRunQueueOnLog(gated.wrap(), { clock: new FakeClock().read });
  t.after(() => queue.stop());
  return { gated, queue };
}

/** The sequence number behind a ticket id of the queue's one partition (the id itself does not tell it). */
function seqOf(queue: Queue, entryId: string): number | undefined {
  return queue.views()[0]!.entries.get(entryId)?.seq;
}

/** Submits on `thread` until the partition serves again after a failed append (it is being rebuilt meanwhile). */
async function submitOnceServing(queue: Queue, thread: string): Promise<{ entryId: string }> {
  for (let i = 0; i < 100; i++) {
    const ticket = await queue.submit(submitOf('acme', thread)).catch(() => undefined);
    if (ticket !== undefined) return ticket;
    await new Promise((resolve) => setImmediate(resolve));
  }
  assert.fail('the partition never served again');
}

describe('durable before answered', () => {
  it('commands and reads wait for the append holding what they saw', async (t) => {
    const { gated, queue } = await gatedQueue(t);
    const first = await queue.submit(submitOf('acme', 't1'));
    gated.close();
    const closing = queue
      .take({ agents: ['build'], holder: 'w', ttlMs: 1000 })
      .then((taken) => queue.close(taken!.lease, { status: 'succeeded' }));
    const read = queue.entry('acme', first.entryId);
    const awaited = queue.awaitClosed('acme', first.entryId);
    assert.equal(await settledWithin(read, 20), false, 'a read answered before the lease it saw was durable');
    assert.equal(await settledWithin(awaited, 20), false);
    gated.open();
    await closing;
    assert.equal((await read).status, 'open');
    assert.equal((await awaited)!.outcome, 'succeeded');
  });

  it('a read never shows what is not yet durable: it answers the view as it was when asked', async (t) => {
    const { gated, queue } = await gatedQueue(t);
    const ticket = await queue.submit(submitOf('acme', 't1'));
    gated.close();
    const read = queue.entry('acme', ticket.entryId);
    const taking = queue.take({ agents: ['build'], holder: 'w', ttlMs: 1000 });
    assert.equal((await read).lease, null, 'the read showed a lease whose append had not completed');
    gated.open();
    assert.ok(await taking);
  });

  it('a failed append refuses its commands, and the partition is rebuilt from the log and serves again', async (t) => {
    const { gated, queue } = await gatedQueue(t);
    const kept = await queue.submit(submitOf('acme', 't1'));
    gated.failNext = true;
    await assert.rejects(queue.submit(submitOf('acme', 't2')), { code: 'LogUnavailable' });
    const ticket = await submitOnceServing(queue, 't3');
    assert.equal(seqOf(queue, ticket.entryId), 2, 'the failed submission left no trace: its sequence number is issued again');
    assert.equal((await queue.openEntries('acme', 't2')).length, 0);
    assert.equal((await queue.entry('acme', kept.entryId)).status, 'open');
    await assertReplayEqualsLive(queue);
  });

  describe('with appends pipelined (a log that takes several in flight, as Kafka does)', () => {
    /** Submits on threads t1..tn, one tick apart, so that each goes in an append of its own. */
    async function submitsOneTickApart(queue: Queue, n: number): Promise<Array<Promise<{ entryId: string }>>> {
      const submits: Array<Promise<{ entryId: string }>> = [];
      for (let i = 1; i <= n; i++) {
        submits.push(queue.submit(submitOf('acme', `t${i}`)));
        await new Promise((resolve) => setImmediate(resolve));
      }
      return submits;
    }

    it('several appends go in flight at once, up to the bound, and answer in order', async (t) => {
      const { gated, queue } = await gatedQueue(t, 4);
      gated.close();
      const submits = await submitsOneTickApart(queue, 6);
      assert.equal(gated.appends, 4, 'four appends in flight at the gate, the rest queued behind them');
      gated.open();
      const tickets = await Promise.all(submits);
      assert.deepEqual(
        tickets.map((ticket) => seqOf(queue, ticket.entryId)),
        [1, 2, 3, 4, 5, 6],
      );
      await assertReplayEqualsLive(queue);
    });

    it('a failed append fails those in flight behind it; nothing of them stays, and the partition serves again', async (t) => {
      const { gated, queue } = await gatedQueue(t, 4);
      const kept = await queue.submit(submitOf('acme', 't0'));
      gated.close();
      const submits = await submitsOneTickApart(queue, 3);
      gated.failNext = true;
      gated.open();
      for (const submit of submits) await assert.rejects(submit, { code: 'LogUnavailable' });
      const ticket = await submitOnceServing(queue, 't9');
      assert.equal(seqOf(queue, ticket.entryId), 2, 'the failed submissions left no trace');
      for (const thread of ['t1', 't2', 't3']) assert.equal((await queue.openEntries('acme', thread)).length, 0);
      assert.equal((await queue.entry('acme', kept.entryId)).status, 'open');
      await assertReplayEqualsLive(queue);
    });
  });
});
