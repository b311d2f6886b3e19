/**
 * RunQueue contract, the batch commands: submitBatch (one append per partition, per-item
 * refusals), takeStarted (lease and attempt in one append, several at once, none left:
 * leased unstarted) and closeBatch (per-item answers as close's).
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { isRunlogError } from '../../../src/errors.ts';
import type { BatchAnswer, Ticket } from '../../../src/queue/types.ts';
import { allEvents, logSize, queueOn, refused, submitOf, type Backend } from '../fixtures.ts';

const TTL = 30_000;

function tickets(answers: BatchAnswer<'ticket', Ticket>[]): Ticket[] {
  return answers.map((answer) => {
    if ('error' in answer) throw answer.error;
    return answer.ticket;
  });
}

export function batchTests(backend: Backend): void {
  it('submitBatch submits in order, answers per item, and refuses an item alone (ThreadBusy, QueueFull, SubmissionKeyReused)', async (t) => {
    // One partition: a cluster's client sends each partition's items to its owner on their own, so only there is the order across partitions not kept.
    const { queue, log } = await queueOn(backend, t, { partitions: 1, capacity: { perTenant: 4 } });
    const answers = await queue.submitBatch([
      submitOf('acme', 't1', { key: 'k1' }),
      submitOf('acme', 't1', { key: 'k1' }), // the same submission: the same ticket, not created
      submitOf('acme', 't1', { key: 'k1', input: 'other work' }),
      submitOf('acme', 't2'),
      submitOf('acme', 't2', { strategy: 'reject' }),
      submitOf('acme', 't3'),
      submitOf('acme', 't4'),
      submitOf('acme', 't5'),
    ]);
    const shown = answers.map((answer) => ('error' in answer ? answer.error.code : answer.ticket.created));
    assert.deepEqual(shown, [true, false, 'SubmissionKeyReused', true, 'ThreadBusy', true, true, 'QueueFull']);
    const [first, same] = answers as [{ ticket: Ticket }, { ticket: Ticket }];
    assert.equal(same.ticket.entryId, first.ticket.entryId);
    const submitted = (await allEvents(log)).filter((event) => event.type === 'Submitted');
    assert.deepEqual(submitted.map((event) => event.thread).sort(), ['t1', 't2', 't3', 't4']);
    const t2 = await queue.openEntries('acme', 't2');
    assert.equal(t2.length, 1);
  });

  it('submitBatch refuses a malformed item by its index and writes nothing of the batch', async (t) => {
    const { queue, log } = await queueOn(backend, t);
    const before = await logSize(log);
    await assert.rejects(
      queue.submitBatch([submitOf('acme', 't1'), submitOf('acme', 't2', { priority: 1.5 })]),
      (error: unknown) => isRunlogError(error, 'InvalidArgument') && /requests\[1\]: priority/.test(error.message),
    );
    await refused(log, 'InvalidArgument', () => queue.submitBatch([]));
    assert.equal(await logSize(log), before);
  });

  it('takeStarted leases up to max heads and starts an attempt of each, in one append with the lease', async (t) => {
    const { queue, log } = await queueOn(backend, t, { partitions: 1 });
    tickets(await queue.submitBatch(['t1', 't1', 't2', 't3'].map((thread) => submitOf('acme', thread))));
    const started = await queue.takeStarted({ agents: ['build'], holder: 'w', ttlMs: TTL, max: 5 });
    assert.deepEqual(started.map((s) => s.entry.thread).sort(), ['t1', 't2', 't3'], 'one per thread: only heads');
    for (const { lease, entry, attempt } of started) {
      assert.equal(attempt!.attempt, 1);
      assert.equal(attempt!.epoch, lease.epoch);
      assert.deepEqual(entry.attempts, [attempt]);
      assert.deepEqual(entry.lease, lease);
    }
    const events = (await allEvents(log)).slice(-6);
    assert.deepEqual(
      events.map((event) => event.type),
      ['Leased', 'AttemptStarted', 'Leased', 'AttemptStarted', 'Leased', 'AttemptStarted'],
    );
    assert.deepEqual(await queue.takeStarted({ agents: ['build'], holder: 'w', ttlMs: TTL }), [], 'nothing more is takeable');
    const closed = await queue.closeBatch(started.map(({ lease }) => ({ lease, request: { status: 'succeeded', result: 'ok' } })));
    assert.deepEqual(
      closed.map((answer) => ('entry' in answer ? answer.entry.outcome : answer.error.code)),
      ['succeeded', 'succeeded', 'succeeded'],
    );
    const next = await queue.takeStarted({ agents: ['build'], holder: 'w', ttlMs: TTL, max: 2 });
    assert.deepEqual(
      next.map((s) => s.entry.thread),
      ['t1'],
    );
  });

  it('takeStarted leases an entry with no attempt left unstarted (its maxAttempts, or the cap asked for)', async (t) => {
    const { queue, log } = await queueOn(backend, t);
    await queue.submit(submitOf('acme', 't1'));
    const [first] = await queue.takeStarted({ agents: ['build'], holder: 'w', ttlMs: TTL, maxAttempts: 1 });
    await queue.yield(first!.lease, { kind: 'retry', error: 'boom' });
    const before = (await allEvents(log)).length;
    const [again] = await queue.takeStarted({ agents: ['build'], holder: 'w', ttlMs: TTL, maxAttempts: 1 });
    assert.equal(again!.attempt, null);
    assert.equal(again!.entry.attempts.length, 1);
    const written = (await allEvents(log)).slice(before);
    assert.deepEqual(
      written.map((event) => event.type),
      ['Leased'],
      'the lease alone',
    );
    const parked = await queue.close(again!.lease, { status: 'failed', error: 'parked' });
    assert.equal(parked.outcome, 'failed');
  });

  it('closeBatch closes each item as close does, and answers a stale or repeated item with its own refusal', async (t) => {
    const { queue, clock } = await queueOn(backend, t);
    tickets(await queue.submitBatch(['t1', 't2', 't3'].map((thread) => submitOf('acme', thread))));
    const started = await queue.takeStarted({ agents: ['build'], holder: 'w', ttlMs: TTL, max: 3 });
    assert.equal(started.length, 3);
    const [a, b, c] = started as [(typeof started)[0], (typeof started)[0], (typeof started)[0]];
    await queue.cancel('acme', c.entry.entryId);
    const answers = await queue.closeBatch([
      { lease: a.lease, request: { status: 'succeeded' } },
      { lease: b.lease, request: { status: 'failed', error: 'bad' } },
      { lease: a.lease, request: { status: 'succeeded' } },
      { lease: c.lease, request: { status: 'succeeded' } },
      { lease: { ...b.lease, epoch: b.lease.epoch + 1 }, request: { status: 'succeeded' } },
    ]);
    const shown = answers.map((answer) => ('entry' in answer ? answer.entry.outcome : answer.error.code));
    assert.deepEqual(shown, ['succeeded', 'failed', 'EntryClosed', 'EntryClosed', 'EntryClosed']);
    clock.advance(1);
    await assert.rejects(
      queue.closeBatch([
        { lease: a.lease, request: { status: 'succeeded' } },
        { lease: a.lease, request: { status: 'done' } as never },
      ]),
      (error: unknown) => isRunlogError(error, 'InvalidArgument') && /closes\[1\]: status/.test(error.message),
    );
  });
}
