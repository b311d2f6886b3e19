/** Retention: Expire (the overdue rule) and Prune. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { recordKeyOf } from '../../../src/events/keys.ts';
import type { Closed } from '../../../src/events/types.ts';
import { isOverdue, isPrunable } from '../../../src/queue/decide.ts';
import { given, viewOf } from '../../support/decider-spec.ts';
import { cancelled, closed, idOf, keyCreated, leased, pruned, started, submitted, T0, TTL, yielded } from './events.ts';

const EXPIRE = { type: 'Expire' } as const;

function expiredAt(seq: number, deadline: number, now: number, thread = 't1'): Closed {
  return closed(seq, { thread, at: now, outcome: 'expired', error: `start deadline ${deadline} passed before the entry started` });
}

describe('decider: expire (the overdue rule)', () => {
  it('closes expired every open entry whose start deadline passed unstarted, earliest deadline first', () => {
    given(
      keyCreated,
      submitted(1, { deadline: T0 + 30 }),
      submitted(2, { thread: 't2', deadline: T0 + 10 }),
      submitted(3, { deadline: T0 + 90 }),
    )
      .when(EXPIRE, T0 + 30)
      .then([expiredAt(2, T0 + 10, T0 + 30, 't2'), expiredAt(1, T0 + 30, T0 + 30)]);
  });

  it('not before its deadline: at the deadline it is overdue, a millisecond before it is not', () => {
    given(keyCreated, submitted(1, { deadline: T0 + 10 }))
      .when(EXPIRE, T0 + 9)
      .thenUnchanged();
    given(keyCreated, submitted(1, { deadline: T0 + 10 }))
      .when(EXPIRE, T0 + 10)
      .then([expiredAt(1, T0 + 10, T0 + 10)]);
  });

  it('a lease does not protect an entry that never started: a deadline is a start deadline', () => {
    // The sweep used to spare it while leased (and never came back to it); see test/queue/overdue-sweep.test.ts.
    given(keyCreated, submitted(1, { deadline: T0 + 10 }), leased(1, { expiresAt: T0 + 10 * TTL }))
      .when(EXPIRE, T0 + 20)
      .then([expiredAt(1, T0 + 10, T0 + 20)]);
  });

  it('an entry that started (even one handed back since) is never overdue', () => {
    given(keyCreated, submitted(1, { deadline: T0 + 10 }), leased(1), started(1), yielded(1, { deferredAttempts: 1 }))
      .when(EXPIRE, T0 + 20)
      .thenUnchanged();
  });

  it('a closed entry is never overdue; an entry without deadline never is', () => {
    given(keyCreated, submitted(1, { deadline: T0 + 10 }), cancelled(1), submitted(2))
      .when(EXPIRE, T0 + 20)
      .thenUnchanged();
  });

  it('an entry expired once is not expired again', () => {
    const { view, when } = given(keyCreated, submitted(1, { deadline: T0 + 10 }));
    const first = when(EXPIRE, T0 + 20).then([expiredAt(1, T0 + 10, T0 + 20)]);
    for (const event of first.kind === 'append' ? first.events : []) view.apply(null, recordKeyOf(event), event);
    assert.deepStrictEqual(when(EXPIRE, T0 + 30).decision, { kind: 'unchanged', events: [] });
  });

  it('isOverdue: open, deadline passed, no attempt', () => {
    const view = viewOf([keyCreated, submitted(1, { deadline: T0 + 10 }), submitted(2, { thread: 't2' })]);
    const [doomed, timeless] = [view.entries.get(idOf(1))!, view.entries.get(idOf(2))!];
    assert.deepEqual([isOverdue(doomed, T0 + 9), isOverdue(doomed, T0 + 10), isOverdue(timeless, T0 + 10 ** 9)], [false, true, false]);
  });
});

describe('decider: prune', () => {
  const history = [
    keyCreated,
    submitted(1),
    submitted(2, { thread: 't2' }),
    submitted(3, { thread: 't3' }),
    submitted(4, { thread: 't4' }),
    closed(2, { thread: 't2', at: T0 + 10 }),
    closed(1, { at: T0 + 20 }),
    closed(3, { thread: 't3', at: T0 + 30 }),
  ];

  it('prunes the entries closed at or before closedBy, oldest close first, carrying the issued watermark', () => {
    given(...history)
      .when({ type: 'Prune', closedBy: T0 + 20, limit: 10 }, T0 + 99)
      .then([pruned([2, 1], 4, T0 + 99)]);
  });

  it('at most `limit` entries', () => {
    given(...history)
      .when({ type: 'Prune', closedBy: T0 + 30, limit: 2 }, T0 + 99)
      .then([pruned([2, 1], 4, T0 + 99)]);
  });

  it('never an open entry, nor one closed after closedBy: none due is unchanged', () => {
    given(...history)
      .when({ type: 'Prune', closedBy: T0 + 9, limit: 10 }, T0 + 99)
      .thenUnchanged();
    given(keyCreated, submitted(1))
      .when({ type: 'Prune', closedBy: T0 + 10 ** 9, limit: 10 }, T0 + 99)
      .thenUnchanged();
  });

  it('an entry pruned already is not pruned again', () => {
    given(...history, pruned([2, 1], 4))
      .when({ type: 'Prune', closedBy: T0 + 30, limit: 10 }, T0 + 99)
      .then([pruned([3], 4, T0 + 99)]);
  });

  it('isPrunable: closed at or before closedBy', () => {
    const view = viewOf(history);
    const [open, closedAt20] = [view.entries.get(idOf(4))!, view.closedTicket(idOf(1))!];
    assert.deepEqual(
      [isPrunable(closedAt20, T0 + 19), isPrunable(closedAt20, T0 + 20), isPrunable(open, T0 + 10 ** 9)],
      [false, true, false],
    );
  });
});
