/**
 * The PartitionView fold on its own: hand-built events folded with `apply(offset, key, event)`,
 * then the view's facts read back. No log, no queue, no clock: time is only the events' `at`
 * and the `now` a query is given.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PRUNED_KEY, recordKeyOf, stateKey, submissionKey } from '../../src/events/keys.ts';
import type { Outcome, RunlogEvent, Submitted } from '../../src/events/types.ts';
import { emptyMetrics } from '../../projections/metrics.ts';
import { PartitionView, submissionKeyId } from '../../projections/partition-view.ts';
import type { ClosedEntry } from '../../projections/closed-entry.ts';
import type { EntryState } from '../../projections/entry-state.ts';
import { closedReader } from '../support/decider-spec.ts';

const T0 = 1_700_000_000_000;

type Ids = { tenant: string; thread: string; entryId: string };

function ids(seq: number, thread = 't1', tenant = 'acme'): Ids {
  return { tenant, thread, entryId: `0-${seq}` };
}

function submitted(seq: number, at: number, extra: Partial<Submitted> = {}): Submitted {
  return {
    type: 'Submitted',
    ...ids(seq),
    at,
    seq,
    agent: 'build',
    input: new TextEncoder().encode(`input ${seq}`),
    key: null,
    strategy: 'enqueue',
    priority: 0,
    notBefore: null,
    deadline: null,
    maxAttempts: 3,
    metadata: {},
    ...extra,
  };
}

const leased = (entry: Ids, at: number, epoch: number, expiresAt: number): RunlogEvent => ({
  type: 'Leased',
  ...entry,
  at,
  holder: `w${epoch}`,
  epoch,
  expiresAt,
  deferredAttempts: 0,
});

const started = (entry: Ids, at: number, attempt: number, epoch: number): RunlogEvent => ({
  type: 'AttemptStarted',
  ...entry,
  at,
  runId: `${entry.entryId}/run-${attempt}`,
  attempt,
  epoch,
});

const closed = (entry: Ids, at: number, outcome: Outcome, error: string | null = null): RunlogEvent => ({
  type: 'Closed',
  ...entry,
  at,
  outcome,
  result: outcome === 'succeeded' ? new TextEncoder().encode('done') : null,
  error,
  deferredAttempts: 0,
});

const pruned = (at: number, entryIds: string[], issuedThrough: number): RunlogEvent => ({
  type: 'EntriesPruned',
  tenant: '',
  thread: '',
  entryId: '',
  at,
  entryIds,
  issuedThrough,
});

/** A view and the next offset: folds events as a replay does, each under its record key. */
class Fold {
  readonly view = new PartitionView(0);
  offset = 0n;
  /** What was folded, by offset: closed entries are read back from it (as the queue reads its log). */
  readonly log: (RunlogEvent | null)[] = [];

  events(...events: RunlogEvent[]): this {
    for (const event of events) {
      this.log.push(event);
      this.view.apply(this.offset++, recordKeyOf(event), event);
    }
    return this;
  }

  tombstone(key: string): this {
    this.log.push(null);
    this.view.apply(this.offset++, key, null);
    return this;
  }

  open(seq: number): EntryState | undefined {
    return this.view.entries.get(`0-${seq}`);
  }

  /** The entry open, or closed and read back from its records. */
  entry(seq: number): EntryState | ClosedEntry | undefined {
    return this.view.entries.get(`0-${seq}`) ?? closedReader(this.view, this.log)(`0-${seq}`);
  }

  openIds(thread: string, tenant = 'acme'): string[] | undefined {
    return this.view
      .thread(tenant, thread)
      ?.openEntries()
      .map((entry) => entry.entryId);
  }

  best(now: number, agents = ['build']): string | undefined {
    return this.view.bestHead(agents, now)?.entryId;
  }

  closedIds(limit = 100, accept: Parameters<PartitionView['oldestClosed']>[1] = () => true): string[] {
    return this.view.oldestClosed(limit, accept).map((entry) => entry.entryId);
  }
}

describe('PartitionView fold', () => {
  it('a Submitted entry holds what its event says; its thread lists the open entries in submission order', () => {
    const fold = new Fold().events(
      submitted(1, T0, { priority: 2, key: 'k1', metadata: { a: 'b' }, deadline: T0 + 500, maxAttempts: 5 }),
      submitted(2, T0 + 1, { ...ids(2, 't2') }),
      submitted(3, T0 + 2),
    );
    const entry = fold.open(1)!;
    assert.deepEqual(
      [entry.tenant, entry.thread, entry.agent, entry.seq, entry.priority, entry.key, entry.deadline, entry.maxAttempts],
      ['acme', 't1', 'build', 1, 2, 'k1', T0 + 500, 5],
    );
    assert.deepEqual([entry.metadata, entry.submittedAt, new TextDecoder().decode(entry.input)], [{ a: 'b' }, T0, 'input 1']);
    assert.deepEqual([entry.closed, entry.lease, entry.notBefore, entry.attempts, entry.lastEpoch], [false, null, null, [], 0]);
    assert.deepEqual(fold.openIds('t1'), ['0-1', '0-3']);
    assert.deepEqual(fold.openIds('t2'), ['0-2']);
    assert.equal(fold.openIds('t3'), undefined);
    assert.deepEqual([fold.view.openCount, fold.view.issuedThrough, fold.view.lastAt, fold.view.nextOffset], [3, 3, T0 + 2, 3n]);
    assert.equal(fold.view.metrics.enqueued, 3);
  });

  it("heads by agent: only a thread's first open entry is takeable, by priority, then age, then sequence", () => {
    const fold = new Fold().events(
      submitted(1, T0),
      submitted(2, T0, { priority: 9 }), // behind 0-1 on thread t1
      submitted(3, T0 + 1, { ...ids(3, 't2'), priority: 1 }),
      submitted(4, T0, { ...ids(4, 't3'), priority: 1 }),
      submitted(5, T0, { ...ids(5, 't4'), agent: 'deploy', priority: 99 }),
    );
    assert.equal(fold.best(T0 + 1), '0-4', 'priority 1 before 0; the older of the two');
    assert.equal(fold.best(T0 + 1, ['deploy']), '0-5');
    assert.equal(fold.best(T0 + 1, ['build', 'deploy']), '0-5');
    assert.equal(fold.best(T0 + 1, ['lint']), undefined);
    fold.events(closed(ids(4, 't3'), T0 + 2, 'succeeded'), closed(ids(3, 't2'), T0 + 2, 'succeeded'));
    assert.equal(fold.best(T0 + 2), '0-1');
    fold.events(closed(ids(1), T0 + 3, 'failed', 'boom'));
    assert.equal(fold.best(T0 + 3), '0-2', 'the next entry of the thread is its head once the first closes');
    const sameTime = new Fold().events(submitted(7, T0, { ...ids(7, 'x') }), submitted(6, T0, { ...ids(6, 'y') }));
    assert.equal(sameTime.best(T0), '0-6', 'same priority and time: the lower sequence');
  });

  it('a head waits for its notBefore, or for its lease to expire; a yield hands it back', () => {
    const fold = new Fold().events(submitted(1, T0, { notBefore: T0 + 100 }));
    assert.equal(fold.best(T0 + 99), undefined);
    assert.equal(fold.view.nextDueAt(['build']), T0 + 100);
    assert.equal(fold.best(T0 + 100), '0-1');
    fold.events(leased(ids(1), T0 + 100, 1, T0 + 1_000));
    const entry = fold.open(1)!;
    assert.deepEqual([entry.lease, entry.notBefore, entry.lastEpoch], [{ holder: 'w1', epoch: 1, expiresAt: T0 + 1_000 }, null, 1]);
    assert.equal(fold.best(T0 + 999), undefined, 'a leased head waits for its lease to expire');
    assert.equal(fold.view.nextDueAt(['build']), T0 + 1_000);
    fold.events({ type: 'LeaseExtended', ...ids(1), at: T0 + 500, holder: 'w1', epoch: 1, expiresAt: T0 + 5_000, deferredAttempts: 0 });
    assert.equal(fold.best(T0 + 1_000), undefined);
    assert.equal(fold.best(T0 + 5_000), '0-1', 'an expired lease makes the head takeable again');
    fold.events(leased(ids(1), T0 + 5_000, 2, T0 + 9_000), started(ids(1), T0 + 5_000, 1, 2));
    fold.events({
      type: 'Yielded',
      ...ids(1),
      at: T0 + 5_010,
      epoch: 2,
      kind: 'retry',
      error: 'boom',
      notBefore: T0 + 6_000,
      deferredAttempts: 0,
    });
    assert.deepEqual([entry.lease, entry.notBefore, entry.lastEpoch], [null, T0 + 6_000, 2]);
    assert.equal(fold.best(T0 + 5_999), undefined);
    assert.equal(fold.best(T0 + 6_000), '0-1');
    fold.events(leased(ids(1), T0 + 6_000, 3, T0 + 9_000), started(ids(1), T0 + 6_000, 2, 3));
    fold.events({ type: 'Yielded', ...ids(1), at: T0 + 6_001, epoch: 3, kind: 'defer', error: null, notBefore: null, deferredAttempts: 1 });
    assert.deepEqual([entry.lease, entry.notBefore, entry.deferredAttempts, entry.lastEpoch], [null, null, 1, 3]);
    assert.equal(fold.best(T0 + 6_001), '0-1', 'a defer hands the head back at once');
    assert.equal(fold.view.metrics.retried, 1, 'a defer is not a retry');
  });

  it('AttemptStarted adds the attempt and its run id to the thread; wait and exec times go to the metrics', () => {
    const fold = new Fold().events(submitted(1, T0), leased(ids(1), T0 + 40, 1, T0 + 1_000), started(ids(1), T0 + 50, 1, 1));
    const entry = fold.open(1)!;
    assert.deepEqual(entry.attempts, [{ runId: '0-1/run-1', attempt: 1, epoch: 1, startedAt: T0 + 50 }]);
    assert.deepEqual([...entry.threadState.runIds], [['0-1/run-1', '0-1']]);
    fold.events({ type: 'Yielded', ...ids(1), at: T0 + 80, epoch: 1, kind: 'retry', error: 'boom', notBefore: null, deferredAttempts: 0 });
    fold.events(leased(ids(1), T0 + 100, 2, T0 + 1_000), started(ids(1), T0 + 100, 2, 2));
    assert.deepEqual(
      entry.attempts.map((a) => a.attempt),
      [1, 2],
    );
    fold.view.watchedEntryId = '0-1'; // kept whole as it closes, as `runlog state --at --entry` asks
    fold.events(closed(ids(1), T0 + 110, 'succeeded'));
    assert.deepEqual([fold.view.watchedClose?.outcome, fold.view.watchedClose?.attempts.map((a) => a.attempt)], ['succeeded', [1, 2]]);
    // Closed, the entry leaves the view for the ticket index: it keeps its outcome and drops its run (EntryState.retire).
    assert.deepEqual(
      [entry.closed, entry.outcome, entry.attempts, entry.lease, fold.view.entries.has('0-1')],
      [true, 'succeeded', [], null, false],
    );
    assert.deepEqual(fold.view.metrics, {
      ...emptyMetrics(),
      enqueued: 1,
      retried: 1,
      succeeded: 1,
      processed: 2,
      totalWaitMs: 50,
      maxWaitMs: 50,
      totalExecMs: 30 + 10,
      maxExecMs: 30,
    });
  });

  it('Closed, CancelRequested and ThreadDeleted close the entry with its outcome, free its lease, count it once', () => {
    const fold = new Fold().events(
      submitted(1, T0),
      submitted(2, T0, { ...ids(2, 't2') }),
      submitted(3, T0, { ...ids(3, 't3', 'globex') }),
      submitted(4, T0, { ...ids(4, 't4') }),
      leased(ids(1), T0 + 1, 1, T0 + 1_000),
    );
    fold.events(closed(ids(1), T0 + 10, 'succeeded'));
    fold.events({ type: 'CancelRequested', ...ids(2, 't2'), at: T0 + 20, reason: 'not needed', deferredAttempts: 0 });
    fold.events({ type: 'ThreadDeleted', ...ids(3, 't3', 'globex'), at: T0 + 30, deferredAttempts: 0 });
    fold.events(closed(ids(4, 't4'), T0 + 40, 'expired'));
    const outcomes = [1, 2, 3, 4].map((seq) => {
      const entry = fold.entry(seq)!;
      return [entry.outcome, entry.error, entry.closedAt, entry.lease, entry.closed];
    });
    assert.deepEqual(outcomes, [
      ['succeeded', null, T0 + 10, null, true],
      ['cancelled', 'not needed', T0 + 20, null, true],
      ['threadDeleted', null, T0 + 30, null, true],
      ['expired', null, T0 + 40, null, true],
    ]);
    assert.equal(new TextDecoder().decode(fold.entry(1)!.result!), 'done');
    fold.events(closed(ids(2, 't2'), T0 + 50, 'failed', 'late'), {
      type: 'CancelRequested',
      ...ids(1),
      at: T0 + 60,
      reason: 'late',
      deferredAttempts: 0,
    });
    assert.deepEqual([fold.entry(2)!.outcome, fold.entry(2)!.closedAt, fold.entry(1)!.outcome], ['cancelled', T0 + 20, 'succeeded']);
    const m = fold.view.metrics;
    assert.deepEqual([m.succeeded, m.failed, m.cancelled, m.expired, m.processed], [1, 0, 1, 1, 0]);
    assert.deepEqual([fold.view.openCount, [...fold.view.openByTenant]], [0, []]);
    assert.equal(fold.best(T0 + 100), undefined);
  });

  it('oldestClosed lists closed entries by close time, oldest first, up to the limit, while accept says yes', () => {
    const fold = new Fold();
    for (let seq = 1; seq <= 5; seq++) fold.events(submitted(seq, T0, { ...ids(seq, `t${seq}`) }));
    fold.events(closed(ids(3, 't3'), T0 + 30, 'succeeded'), closed(ids(1, 't1'), T0 + 10, 'failed'));
    fold.events(closed(ids(4, 't4'), T0 + 20, 'succeeded')); // a clock that stepped back: kept in closedAt order
    fold.events(closed(ids(2, 't2'), T0 + 40, 'expired'));
    assert.deepEqual(fold.closedIds(), ['0-1', '0-4', '0-3', '0-2']);
    assert.deepEqual(fold.closedIds(2), ['0-1', '0-4']);
    assert.deepEqual(
      fold.closedIds(100, (entry) => entry.closedAt! <= T0 + 20),
      ['0-1', '0-4'],
    );
    fold.events(pruned(T0 + 50, ['0-4'], 5));
    assert.deepEqual(fold.closedIds(), ['0-1', '0-3', '0-2'], 'a pruned entry is no longer listed');
  });

  it('submission keys name their entry by tenant, thread and key, until the entry is pruned', () => {
    const fold = new Fold().events(
      submitted(1, T0, { key: 'k' }),
      submitted(2, T0, { ...ids(2, 't2'), key: 'k' }),
      submitted(3, T0, { ...ids(3, 't1', 'globex'), key: 'k' }),
      submitted(4, T0),
    );
    assert.deepEqual(Object.fromEntries(fold.view.submissionKeys), {
      [submissionKeyId('acme', 't1', 'k')]: '0-1',
      [submissionKeyId('acme', 't2', 'k')]: '0-2',
      [submissionKeyId('globex', 't1', 'k')]: '0-3',
    });
    fold.events(closed(ids(1), T0 + 1, 'succeeded'), pruned(T0 + 2, ['0-1'], 4));
    assert.equal(fold.view.submissionKeys.has(submissionKeyId('acme', 't1', 'k')), false);
    assert.equal(fold.view.submissionKeys.size, 2);
  });

  it('tenant counts hold the open entries per tenant; a tenant without open entries is not listed', () => {
    const fold = new Fold().events(
      submitted(1, T0),
      submitted(2, T0, { ...ids(2, 't2') }),
      submitted(3, T0, { ...ids(3, 't1', 'globex') }),
    );
    assert.deepEqual(
      [...fold.view.openByTenant],
      [
        ['acme', 2],
        ['globex', 1],
      ],
    );
    fold.events(closed(ids(3, 't1', 'globex'), T0 + 1, 'succeeded'), closed(ids(1), T0 + 1, 'succeeded'));
    assert.deepEqual([fold.view.openByTenant.get('acme'), fold.view.openByTenant.get('globex')], [1, undefined]);
    assert.deepEqual([...fold.view.openByTenant], [['acme', 1]]);
    fold.events(submitted(4, T0 + 2, { ...ids(4, 't9', 'globex') }));
    assert.deepEqual(
      [...fold.view.openByTenant],
      [
        ['acme', 1],
        ['globex', 1],
      ],
    );
  });

  it('EntriesPruned and tombstones remove closed entries only, with their run ids and, last, their thread', () => {
    const fold = new Fold().events(
      submitted(1, T0),
      submitted(2, T0),
      submitted(3, T0, { ...ids(3, 't2') }),
      leased(ids(1), T0, 1, T0 + 1_000),
      started(ids(1), T0, 1, 1),
      closed(ids(1), T0 + 1, 'succeeded'),
      closed(ids(3, 't2'), T0 + 1, 'succeeded'),
    );
    assert.equal(fold.view.thread('acme', 't2'), undefined, 'a thread goes with its last open entry');
    assert.equal(fold.view.closed.byRunId('acme', 't1', '0-1/run-1').length, 1, 'a closed entry keeps its run ids');
    fold.events(pruned(T0 + 2, ['0-1', '0-2', '0-99'], 3));
    assert.deepEqual([...fold.view.entries.keys()], ['0-2'], 'the open entry 0-2 and unknown ids are left alone');
    assert.deepEqual(
      ['0-1', '0-3'].map((id) => fold.view.closedTicket(id)?.entryId),
      [undefined, '0-3'],
    );
    assert.deepEqual([...fold.view.thread('acme', 't1')!.runIds], []);
    assert.deepEqual(fold.view.closed.byRunId('acme', 't1', '0-1/run-1'), [], 'its run ids go with it');
    assert.deepEqual(fold.openIds('t1'), ['0-2']);
    fold.tombstone(submissionKey('0-3'));
    assert.equal(fold.entry(3), undefined);
    assert.equal(fold.view.closed.size, 0);
    fold.tombstone(stateKey('0-2')).tombstone(PRUNED_KEY);
    assert.deepEqual([...fold.view.entries.keys()], ['0-2'], 'a tombstone of an open entry, or of a partition key, removes nothing');
    assert.equal(fold.view.metrics.dropped, 2);
    assert.equal(fold.view.openCount, 1);
  });

  it('issuedThrough is the highest sequence submitted or pruned, and survives pruning everything', () => {
    const fold = new Fold().events(submitted(1, T0), submitted(2, T0), closed(ids(1), T0, 'succeeded'), closed(ids(2), T0, 'failed'));
    fold.events(pruned(T0 + 1, ['0-1', '0-2'], 2));
    assert.deepEqual([fold.view.entries.size, fold.view.threads.size, fold.view.issuedThrough], [0, 0, 2]);
    const compacted = new Fold().events(pruned(T0 + 1, ['0-1', '0-2'], 2));
    assert.equal(compacted.view.issuedThrough, 2, 'a compacted log keeps only the EntriesPruned record');
    compacted.events(pruned(T0 + 2, [], 1));
    assert.equal(compacted.view.issuedThrough, 2, 'never lowered');
    const secret = new Uint8Array(16).fill(7);
    compacted.events({ type: 'TicketKeyCreated', tenant: '', thread: '', entryId: '', at: T0, secret, legacyThrough: 1 });
    assert.deepEqual(compacted.view.ticketKey, { secret, legacyThrough: 1 });
  });

  it('a record at an offset already folded is ignored; a second Submitted or an event of an unknown entry changes nothing', () => {
    const fold = new Fold();
    const first = submitted(1, T0);
    fold.view.apply(5n, recordKeyOf(first), first);
    fold.view.apply(5n, recordKeyOf(first), first);
    const late = closed(ids(1), T0 + 1, 'succeeded');
    fold.view.apply(4n, recordKeyOf(late), late);
    assert.deepEqual([fold.view.metrics.enqueued, fold.entry(1)!.closed, fold.view.nextOffset], [1, false, 6n]);
    fold.offset = 6n;
    fold.events(submitted(1, T0 + 5, { priority: 7 }), leased(ids(9), T0 + 5, 1, T0 + 100), closed(ids(9), T0 + 5, 'failed'));
    assert.deepEqual([fold.view.entries.size, fold.entry(1)!.priority, fold.view.metrics.enqueued, fold.view.metrics.failed], [1, 0, 1, 0]);
    assert.deepEqual(fold.openIds('t1'), ['0-1']);
  });

  it("the writer's own events fold at a null offset, and appended() then marks them durable", () => {
    const view = new PartitionView(0);
    const events = [submitted(1, T0), leased(ids(1), T0, 1, T0 + 100)];
    for (const event of events) view.apply(null, recordKeyOf(event), event);
    assert.deepEqual([view.entries.size, view.entries.get('0-1')!.lease?.epoch, view.nextOffset], [1, 1, 0n]);
    view.appended(1n);
    assert.equal(view.nextOffset, 2n);
    view.apply(1n, recordKeyOf(events[1]!), events[1]!);
    view.appended(0n);
    assert.equal(view.nextOffset, 2n, 'replayed records and an older appended() move nothing back');
    assert.equal(view.metrics.enqueued, 1);
  });
});
