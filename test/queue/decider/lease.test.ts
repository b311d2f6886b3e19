/**
 * Leases: take's Lease and takeEntry's LeaseEntry (take eligibility, an overdue head expired
 * instead), Extend, and the current-lease rule every command under a lease applies.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Command } from '../../../src/queue/commands.ts';
import { isAskedFor, isCurrentLease, isFreeHead, isTakeable } from '../../../src/queue/decide.ts';
import { given, viewOf } from '../../support/decider-spec.ts';
import { closed, idOf, keyCreated, leased, leaseOn, started, submitted, T0, TTL, yielded } from './events.ts';

const NOW = T0 + 500;

/** take's Lease of entry `seq` for agent build (and the tenants given; null: any tenant). */
function lease(seq: number, tenants: readonly string[] | null = null, agents: readonly string[] = ['build']): Command {
  return { type: 'Lease', entryId: idOf(seq), holder: 'w2', ttlMs: 2 * TTL, agents, tenants };
}

function leaseEntry(seq: number, tenant = 'acme'): Command {
  return { type: 'LeaseEntry', tenant, entryId: idOf(seq), holder: 'w2', ttlMs: 2 * TTL };
}

/** What a lease by w2 at `now` appends. */
function leasedBy2(seq: number, now: number, epoch = 1, deferredAttempts = 0) {
  return leased(seq, { at: now, holder: 'w2', epoch, expiresAt: now + 2 * TTL, deferredAttempts });
}

describe('decider: take eligibility (Lease, LeaseEntry)', () => {
  for (const [name, command] of [
    ['Lease', lease],
    ['LeaseEntry', leaseEntry],
  ] as const) {
    it(`${name}: a free head is leased at the next epoch, until now + ttlMs`, () => {
      const decision = given(keyCreated, submitted(1))
        .when(command(1), NOW)
        .then([leasedBy2(1, NOW)]);
      assert.equal(decision.kind, 'leased');
    });

    it(`${name}: a head whose lease expired is leased at the next epoch, keeping its deferred attempts`, () => {
      given(
        keyCreated,
        submitted(1),
        leased(1),
        started(1),
        yielded(1, { kind: 'defer', deferredAttempts: 1 }),
        leased(1, { epoch: 2, deferredAttempts: 1 }),
      )
        .when(command(1), T0 + TTL)
        .then([leasedBy2(1, T0 + TTL, 3, 1)]);
    });

    it(`${name}: a current lease holds the entry: unchanged`, () => {
      given(keyCreated, submitted(1), leased(1))
        .when(command(1), T0 + TTL - 1)
        .thenUnchanged();
    });

    it(`${name}: not the head of its thread: unchanged`, () => {
      given(keyCreated, submitted(1), submitted(2)).when(command(2), NOW).thenUnchanged();
    });

    it(`${name}: the next entry is head once the one before closed`, () => {
      given(keyCreated, submitted(1), submitted(2), closed(1))
        .when(command(2), NOW)
        .then([leasedBy2(2, NOW)]);
    });

    it(`${name}: a closed entry: unchanged`, () => {
      given(keyCreated, submitted(1), closed(1)).when(command(1), NOW).thenUnchanged();
    });

    it(`${name}: an overdue head (start deadline passed, never started) is closed expired instead, and not leased`, () => {
      const decision = given(keyCreated, submitted(1, { deadline: NOW }))
        .when(command(1), NOW)
        .then([closed(1, { at: NOW, outcome: 'expired', error: `start deadline ${NOW} passed before the entry started` })]);
      assert.equal(decision.kind, 'expired');
    });

    it(`${name}: a head past its deadline that has started is leased (the deadline is a start deadline)`, () => {
      given(keyCreated, submitted(1, { deadline: NOW }), leased(1), started(1))
        .when(command(1), T0 + TTL)
        .then([leasedBy2(1, T0 + TTL, 2)]);
    });
  }

  it('Lease: a head whose notBefore has not passed is not takeable: unchanged', () => {
    given(keyCreated, submitted(1, { notBefore: NOW + 1 }))
      .when(lease(1), NOW)
      .thenUnchanged();
    given(keyCreated, submitted(1, { notBefore: NOW }))
      .when(lease(1), NOW)
      .then([leasedBy2(1, NOW)]);
  });

  it("LeaseEntry: the entry's notBefore (delay, retry backoff) is not waited for", () => {
    given(keyCreated, submitted(1), leased(1), yielded(1, { kind: 'retry', error: 'boom', notBefore: NOW + 60_000 }))
      .when(leaseEntry(1), NOW)
      .then([leasedBy2(1, NOW, 2)]);
  });

  it('Lease: an entry of an agent the take did not ask for: unchanged', () => {
    given(keyCreated, submitted(1))
      .when(lease(1, null, ['deploy']), NOW)
      .thenUnchanged();
    given(keyCreated, submitted(1))
      .when(lease(1, null, ['deploy', 'build']), NOW)
      .then([leasedBy2(1, NOW)]);
  });

  it('Lease: a take naming tenants leases only entries of those tenants', () => {
    given(keyCreated, submitted(1))
      .when(lease(1, ['globex']), NOW)
      .thenUnchanged();
    given(keyCreated, submitted(1, { tenant: 'globex' }))
      .when(lease(1, ['initech', 'globex']), NOW)
      .then([leasedBy2(1, NOW)].map((event) => ({ ...event, tenant: 'globex' })));
    given(keyCreated, submitted(1))
      .when(lease(1, ['acme']), NOW)
      .then([leasedBy2(1, NOW)]);
  });

  it('isAskedFor: one of the agents, and one of the tenants when they are named', () => {
    const entry = viewOf([keyCreated, submitted(1)]).entries.get(idOf(1))!;
    assert.deepEqual(
      [
        isAskedFor(entry, ['build'], null),
        isAskedFor(entry, ['build'], ['acme']),
        isAskedFor(entry, ['build'], ['globex']),
        isAskedFor(entry, ['deploy'], ['acme']),
      ],
      [true, true, false, false],
    );
  });

  it('Lease: an entry the view does not hold: unchanged', () => {
    given(keyCreated).when(lease(1), NOW).thenUnchanged();
  });

  it("LeaseEntry: another tenant's entry: TicketExpired (it reads as a pruned one)", () => {
    given(keyCreated, submitted(1)).when(leaseEntry(1, 'globex'), NOW).then('TicketExpired');
  });

  it('LeaseEntry: an id this partition never issued: TicketNotFound', () => {
    given(keyCreated, submitted(1)).when(leaseEntry(2), NOW).then('TicketNotFound');
  });

  it('the eligibility predicates: isFreeHead ignores notBefore, isTakeable waits for it', () => {
    const view = viewOf([keyCreated, submitted(1, { notBefore: NOW + 1 }), submitted(2)]);
    const [first, second] = [view.entries.get(idOf(1))!, view.entries.get(idOf(2))!];
    assert.deepEqual([isFreeHead(view, first, NOW), isTakeable(view, first, NOW), isTakeable(view, first, NOW + 1)], [true, false, true]);
    assert.deepEqual([isFreeHead(view, second, NOW), isTakeable(view, second, NOW + 1)], [false, false]);
  });
});

describe('decider: extend', () => {
  it('the current lease is extended to now + ttlMs, same holder and epoch', () => {
    given(keyCreated, submitted(1), leased(1))
      .when({ type: 'Extend', lease: leaseOn(1), ttlMs: 5 * TTL }, NOW)
      .then([{ type: 'LeaseExtended', ...ids(1), at: NOW, holder: 'w', epoch: 1, expiresAt: NOW + 5 * TTL, deferredAttempts: 0 }]);
  });

  it('an expired lease cannot extend: LeaseNotCurrent (at expiresAt it has expired)', () => {
    given(keyCreated, submitted(1), leased(1))
      .when({ type: 'Extend', lease: leaseOn(1), ttlMs: TTL }, T0 + TTL)
      .then('LeaseNotCurrent');
  });
});

describe('decider: the current-lease rule (Extend, StartAttempt, Close; a Yield is unchanged instead)', () => {
  const commands = (lease: ReturnType<typeof leaseOn>): Command[] => [
    { type: 'Extend', lease, ttlMs: TTL },
    { type: 'StartAttempt', lease, runId: 'run-x' },
    { type: 'Close', lease, request: { outcome: 'succeeded', result: null, error: null } },
  ];

  it('a stale lease (an earlier epoch) cannot act: LeaseNotCurrent', () => {
    const history = [keyCreated, submitted(1), leased(1), leased(1, { epoch: 2, at: T0 + TTL, expiresAt: T0 + 3 * TTL })];
    for (const command of commands(leaseOn(1)))
      given(...history)
        .when(command, T0 + TTL + 1)
        .then('LeaseNotCurrent');
  });

  it("another holder's lease of the same epoch cannot act: LeaseNotCurrent", () => {
    for (const command of commands(leaseOn(1, { holder: 'thief' })))
      given(keyCreated, submitted(1), leased(1)).when(command, NOW).then('LeaseNotCurrent');
  });

  it('a lease on an entry nobody leases (given back) cannot act: LeaseNotCurrent', () => {
    for (const command of commands(leaseOn(1)))
      given(keyCreated, submitted(1), leased(1), yielded(1)).when(command, NOW).then('LeaseNotCurrent');
  });

  it('a lease on a closed entry: EntryClosed', () => {
    for (const command of commands(leaseOn(1)))
      given(keyCreated, submitted(1), leased(1), closed(1)).when(command, NOW).then('EntryClosed');
  });

  it("a lease naming another tenant's entry: TicketExpired", () => {
    for (const command of commands(leaseOn(1, { tenant: 'globex' })))
      given(keyCreated, submitted(1), leased(1)).when(command, NOW).then('TicketExpired');
  });

  it('isCurrentLease: open, same holder and epoch, unexpired', () => {
    const view = viewOf([keyCreated, submitted(1), leased(1)]);
    const entry = view.entries.get(idOf(1))!;
    assert.deepEqual(
      [
        isCurrentLease(entry, 'w', 1, T0 + TTL - 1),
        isCurrentLease(entry, 'w', 1, T0 + TTL),
        isCurrentLease(entry, 'x', 1, NOW),
        isCurrentLease(entry, 'w', 2, NOW),
      ],
      [true, false, false, false],
    );
  });
});

function ids(seq: number) {
  return { tenant: 'acme', thread: 't1', entryId: idOf(seq) };
}
