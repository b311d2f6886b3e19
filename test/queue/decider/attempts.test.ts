/** Attempts: StartAttempt, Yield (retry and defer), and the attempts-used-up rule the worker asks. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Yielded } from '../../../src/events/types.ts';
import type { CommandOf, YieldFields } from '../../../src/queue/commands.ts';
import { attemptLimit, attemptsUsedUp, countedAttempts } from '../../../src/queue/decide.ts';
import { given, viewOf } from '../../support/decider-spec.ts';
import { closed, idOf, keyCreated, leased, leaseOn, started, submitted, T0, TTL, yielded } from './events.ts';

const NOW = T0 + 500;

function yieldOf(request: YieldFields, epoch = 1): CommandOf<'Yield'> {
  return { type: 'Yield', lease: leaseOn(1, { epoch }), request };
}

function yieldedAt(extra: Partial<Yielded>): Yielded {
  return yielded(1, { at: NOW, ...extra });
}

describe('decider: startAttempt', () => {
  it('the first attempt under the current lease is attempt 1 of its epoch', () => {
    given(keyCreated, submitted(1), leased(1))
      .when({ type: 'StartAttempt', lease: leaseOn(1), runId: 'r1' }, NOW)
      .then([started(1, { at: NOW, runId: 'r1', attempt: 1, epoch: 1 })]);
  });

  it('attempts are numbered on from every attempt made, deferred ones included', () => {
    const history = [keyCreated, submitted(1), leased(1), started(1), yielded(1, { deferredAttempts: 1 })];
    given(...history, leased(1, { epoch: 2, deferredAttempts: 1 }))
      .when({ type: 'StartAttempt', lease: leaseOn(1, { epoch: 2 }), runId: 'r2' }, NOW)
      .then([started(1, { at: NOW, runId: 'r2', attempt: 2, epoch: 2 })]);
  });

  it('a run id already naming a run on the thread: RunIdReused', () => {
    given(keyCreated, submitted(1), leased(1), started(1, { runId: 'r1' }), closed(1), submitted(2), leased(2))
      .when({ type: 'StartAttempt', lease: leaseOn(2), runId: 'r1' }, NOW)
      .then('RunIdReused');
  });

  it("a run id is scoped to its thread: another thread's run id may be used", () => {
    given(keyCreated, submitted(1), leased(1), started(1, { runId: 'r1' }), submitted(2, { thread: 't2' }), leased(2, { thread: 't2' }))
      .when({ type: 'StartAttempt', lease: leaseOn(2, { thread: 't2' }), runId: 'r1' }, NOW)
      .then([started(2, { thread: 't2', at: NOW, runId: 'r1' })]);
  });
});

describe('decider: yield', () => {
  it('a retry gives the entry back, not before now + delayMs', () => {
    given(keyCreated, submitted(1), leased(1), started(1))
      .when(yieldOf({ kind: 'retry', error: 'boom', delayMs: 250 }), NOW)
      .then([yieldedAt({ kind: 'retry', error: 'boom', notBefore: NOW + 250 })]);
  });

  it('a retry without delay (or of 0 ms) is takeable at once: notBefore null', () => {
    for (const delayMs of [null, 0]) {
      given(keyCreated, submitted(1), leased(1), started(1))
        .when(yieldOf({ kind: 'retry', error: 'boom', delayMs }), NOW)
        .then([yieldedAt({ kind: 'retry', error: 'boom', notBefore: null })]);
    }
  });

  it('a defer after an attempt started under this lease hands that attempt back: it does not count', () => {
    given(keyCreated, submitted(1), leased(1), started(1))
      .when(yieldOf({ kind: 'defer', error: null, delayMs: null }), NOW)
      .then([yieldedAt({ kind: 'defer', deferredAttempts: 1 })]);
  });

  it('a defer before any attempt of this lease started hands nothing back', () => {
    given(keyCreated, submitted(1), leased(1), started(1), yielded(1, { kind: 'retry', error: 'boom' }), leased(1, { epoch: 2 }))
      .when(yieldOf({ kind: 'defer', error: null, delayMs: null }, 2), NOW)
      .then([yieldedAt({ kind: 'defer', epoch: 2, deferredAttempts: 0 })]);
  });

  it('a retry never hands an attempt back: it counts', () => {
    given(keyCreated, submitted(1), leased(1), started(1))
      .when(yieldOf({ kind: 'retry', error: 'boom', delayMs: null }), NOW)
      .then([yieldedAt({ kind: 'retry', error: 'boom', deferredAttempts: 0 })]);
  });

  it('a stale yield (the lease expired, or a later epoch holds the entry) changes nothing, and is no refusal', () => {
    given(keyCreated, submitted(1), leased(1))
      .when(yieldOf({ kind: 'defer', error: null, delayMs: null }), T0 + TTL)
      .thenUnchanged();
    given(keyCreated, submitted(1), leased(1), leased(1, { epoch: 2, holder: 'w2', at: T0 + TTL, expiresAt: T0 + 3 * TTL }))
      .when(yieldOf({ kind: 'defer', error: null, delayMs: null }), T0 + TTL + 1)
      .thenUnchanged();
  });

  it('a yield on a closed entry: EntryClosed', () => {
    given(keyCreated, submitted(1), leased(1), closed(1))
      .when(yieldOf({ kind: 'defer', error: null, delayMs: null }), NOW)
      .then('EntryClosed');
  });

  it("a yield naming another tenant's entry: TicketExpired", () => {
    given(keyCreated, submitted(1), leased(1))
      .when({ ...yieldOf({ kind: 'defer', error: null, delayMs: null }), lease: leaseOn(1, { tenant: 'globex' }) }, NOW)
      .then('TicketExpired');
  });
});

describe('decider: attempts used up (the worker parks the entry)', () => {
  const entryWith = (attempts: number, deferredAttempts: number, maxAttempts: number) => ({
    attempts: new Array(attempts).fill(null),
    deferredAttempts,
    maxAttempts,
  });

  it('deferred attempts do not count', () => {
    assert.equal(countedAttempts(entryWith(5, 2, 10)), 3);
  });

  it("the limit is the entry's maxAttempts, lowered (never raised) by the worker's cap", () => {
    assert.deepEqual(
      [attemptLimit(entryWith(0, 0, 3), null), attemptLimit(entryWith(0, 0, 3), 2), attemptLimit(entryWith(0, 0, 3), 9)],
      [3, 2, 3],
    );
  });

  it('used up once the counted attempts reach the limit', () => {
    assert.equal(attemptsUsedUp(entryWith(2, 0, 3), null), false);
    assert.equal(attemptsUsedUp(entryWith(3, 0, 3), null), true);
    assert.equal(attemptsUsedUp(entryWith(3, 1, 3), null), false, 'a deferred attempt was handed back');
    assert.equal(attemptsUsedUp(entryWith(2, 0, 3), 2), true, "the worker's cap");
    assert.equal(attemptsUsedUp(entryWith(0, 0, 3), null, 3), true, 'the attempts made, as the caller counts them');
  });

  it("reads the view's entry as it reads the public one", () => {
    const view = viewOf([keyCreated, submitted(1, { maxAttempts: 2 }), leased(1), started(1), yielded(1, { kind: 'retry', error: 'x' })]);
    const entry = view.entries.get(idOf(1))!;
    assert.deepEqual([countedAttempts(entry), attemptsUsedUp(entry, null), attemptsUsedUp(entry, 1)], [1, false, true]);
  });
});
