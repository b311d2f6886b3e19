/** Closing: Close, Cancel, DeleteThread; which events wake workers and awaitClosed waiters. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { RunlogEvent } from '../../../src/events/types.ts';
import { isClosing, openEntryOf, wakesWorkers } from '../../../src/queue/decide.ts';
import { given, viewOf } from '../../support/decider-spec.ts';
import { answered, cancelled, closed, idOf, keyCreated, leased, leaseOn, pruned, started, submitted, T0, TTL, yielded } from './events.ts';

const NOW = T0 + 500;

describe('decider: close', () => {
  it('the current lease closes the entry with its outcome, result and error', () => {
    const result = new TextEncoder().encode('done');
    given(keyCreated, submitted(1), leased(1), started(1))
      .when({ type: 'Close', lease: leaseOn(1), request: { outcome: 'succeeded', result, error: null } }, NOW)
      .then([closed(1, { at: NOW, outcome: 'succeeded', result })]);
    given(keyCreated, submitted(1), leased(1), started(1))
      .when({ type: 'Close', lease: leaseOn(1), request: { outcome: 'failed', result: null, error: 'parked' } }, NOW)
      .then([closed(1, { at: NOW, outcome: 'failed', error: 'parked' })]);
  });

  it('an expired lease cannot close: LeaseNotCurrent', () => {
    given(keyCreated, submitted(1), leased(1))
      .when({ type: 'Close', lease: leaseOn(1), request: { outcome: 'succeeded', result: null, error: null } }, T0 + TTL)
      .then('LeaseNotCurrent');
  });
});

describe('decider: cancel', () => {
  it('an open entry of the tenant is cancelled with the reason, leased or not', () => {
    given(keyCreated, submitted(1))
      .when({ type: 'Cancel', tenant: 'acme', entryId: idOf(1), reason: 'not needed' }, NOW)
      .then([cancelled(1, { at: NOW, reason: 'not needed' })]);
    given(keyCreated, submitted(1), leased(1))
      .when({ type: 'Cancel', tenant: 'acme', entryId: idOf(1), reason: null }, NOW)
      .then([cancelled(1, { at: NOW })]);
  });

  it('a closed entry: EntryClosed', () => {
    given(keyCreated, submitted(1), cancelled(1))
      .when({ type: 'Cancel', tenant: 'acme', entryId: idOf(1), reason: null }, NOW)
      .then('EntryClosed');
  });

  it("another tenant's entry: TicketExpired, as a pruned one reads", () => {
    given(keyCreated, submitted(1))
      .when({ type: 'Cancel', tenant: 'globex', entryId: idOf(1), reason: null }, NOW)
      .then('TicketExpired');
    given(keyCreated, submitted(1), closed(1), pruned([1], 1))
      .when({ type: 'Cancel', tenant: 'acme', entryId: idOf(1), reason: null }, NOW)
      .then('TicketExpired');
  });
});

describe('decider: deleteThread', () => {
  it("closes every open entry of the thread, in the thread's order, and nothing else", () => {
    const ids = (seq: number) => ({ tenant: 'acme', thread: 't1', entryId: idOf(seq) });
    given(keyCreated, submitted(1), closed(1), submitted(2), submitted(3, { thread: 't2' }), submitted(4), leased(2))
      .when({ type: 'DeleteThread', tenant: 'acme', thread: 't1' }, NOW)
      .then([
        { type: 'ThreadDeleted', ...ids(2), at: NOW, deferredAttempts: 0 },
        { type: 'ThreadDeleted', ...ids(4), at: NOW, deferredAttempts: 0 },
      ]);
  });

  it("a thread with no open entry (or unknown, or another tenant's): unchanged", () => {
    given(keyCreated, submitted(1), closed(1)).when({ type: 'DeleteThread', tenant: 'acme', thread: 't1' }, NOW).thenUnchanged();
    given(keyCreated).when({ type: 'DeleteThread', tenant: 'acme', thread: 't1' }, NOW).thenUnchanged();
    given(keyCreated, submitted(1)).when({ type: 'DeleteThread', tenant: 'globex', thread: 't1' }, NOW).thenUnchanged();
  });
});

describe('decider: what wakes whom', () => {
  const ofType: Record<RunlogEvent['type'], RunlogEvent> = {
    Submitted: submitted(1),
    Leased: leased(1),
    LeaseExtended: { ...leased(1), type: 'LeaseExtended' },
    AttemptStarted: started(1),
    Yielded: yielded(1),
    CancelRequested: cancelled(1),
    Closed: closed(1),
    ThreadDeleted: { type: 'ThreadDeleted', tenant: 'acme', thread: 't1', entryId: idOf(1), at: T0, deferredAttempts: 0 },
    EntriesPruned: pruned([1], 1),
    TicketKeyCreated: keyCreated,
    CommandAnswered: answered({ requestId: 'r1', entryId: idOf(1), created: true }),
  };

  it('closing events: Closed, CancelRequested, ThreadDeleted (their awaitClosed waiters wake)', () => {
    const closing = Object.values(ofType)
      .filter(isClosing)
      .map((event) => event.type);
    assert.deepEqual(closing, ['CancelRequested', 'Closed', 'ThreadDeleted']);
  });

  it('workers wake for a new entry, one given back, and a close (the next entry of its thread is head)', () => {
    const waking = Object.values(ofType)
      .filter(wakesWorkers)
      .map((event) => event.type);
    assert.deepEqual(waking, ['Submitted', 'Yielded', 'CancelRequested', 'Closed', 'ThreadDeleted']);
  });

  it("awaitClosed waits on the tenant's open entry only: closed, unknown or another tenant's is none", () => {
    const view = viewOf([keyCreated, submitted(1), submitted(2, { thread: 't2' }), closed(2, { thread: 't2' })]);
    assert.equal(openEntryOf(view, 'acme', idOf(1))?.entryId, idOf(1));
    assert.equal(openEntryOf(view, 'globex', idOf(1)), undefined);
    assert.equal(openEntryOf(view, 'acme', idOf(2)), undefined);
    assert.equal(openEntryOf(view, 'acme', idOf(3)), undefined);
  });
});
