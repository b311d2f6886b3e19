/** Submit: decide.ts's `submit` and the rules it applies, one test per rule and refusal. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Submitted, TicketKeyCreated } from '../../../src/events/types.ts';
import type { CommandOf, SubmissionFields } from '../../../src/queue/commands.ts';
import { given } from '../../support/decider-spec.ts';
import { closed, idOf, keyCreated, pruned, SECRET, submitted, T0 } from './events.ts';

const NOW = T0 + 500;

/** The submission `submitted(seq, extra)` records. */
function fields(extra: Partial<Submitted> = {}): SubmissionFields {
  const { type: _type, entryId: _entryId, seq: _seq, at: _at, ...rest } = submitted(1, extra);
  return rest;
}

function submit(extra: Partial<Submitted> = {}, more: Partial<CommandOf<'Submit'>> = {}): CommandOf<'Submit'> {
  return { type: 'Submit', submission: fields(extra), capacity: {}, counts: { tenant: 0, total: 0 }, freshSecret: null, ...more };
}

describe('decider: submit', () => {
  it("a partition's first submission writes its ticket key, then the entry, in one decision", () => {
    const key: TicketKeyCreated = { ...keyCreated, at: NOW };
    const decision = given()
      .when(submit({}, { freshSecret: SECRET }), NOW)
      .then([key, { ...submitted(1), at: NOW }]);
    assert.equal(decision.kind, 'created');
    assert.equal(decision.kind === 'created' && decision.entryId, idOf(1));
  });

  it('the ticket key remembers how many plain (legacy) ids the partition issued before it', () => {
    const legacy: Submitted = { ...submitted(1), entryId: '0-1' };
    const key: TicketKeyCreated = { ...keyCreated, at: NOW, legacyThrough: 1 };
    given(legacy)
      .when(submit({}, { freshSecret: SECRET }), NOW)
      .then([key, { ...submitted(2), at: NOW }]);
  });

  it('a partition with a ticket key writes no other: the drawn secret is ignored', () => {
    given(keyCreated)
      .when(submit({}, { freshSecret: new Uint8Array(16).fill(9) }), NOW)
      .then([{ ...submitted(1), at: NOW }]);
  });

  it('a partition without a ticket key and no secret drawn is a bug in the shell, not a refusal', () => {
    assert.throws(() => given().when(submit(), NOW), /has no ticket key and none was drawn/);
  });

  it('an entry takes the next sequence: issuedThrough + 1', () => {
    given(keyCreated, submitted(1), submitted(2, { thread: 't2' }))
      .when(submit(), NOW)
      .then([{ ...submitted(3), at: NOW }]);
  });

  it('a sequence is never reused, even after its entries were pruned', () => {
    given(keyCreated, submitted(1), closed(1), pruned([1], 1))
      .when(submit(), NOW)
      .then([{ ...submitted(2), at: NOW }]);
  });

  it('the same key with the same work names the existing entry and appends nothing (timing and strategy are not the work)', () => {
    const { decision } = given(keyCreated, submitted(1, { key: 'k' })).when(
      submit({ key: 'k', notBefore: NOW + 10, deadline: NOW + 99, strategy: 'reject' }),
      NOW,
    );
    assert.deepStrictEqual(decision, { kind: 'existing', events: [], entryId: idOf(1) });
  });

  it('the same key names its entry even once it closed, and even when the queue is full', () => {
    const { decision } = given(keyCreated, submitted(1, { key: 'k' }), closed(1)).when(
      submit({ key: 'k' }, { capacity: { total: 1 }, counts: { tenant: 5, total: 5 } }),
      NOW,
    );
    assert.deepStrictEqual(decision, { kind: 'existing', events: [], entryId: idOf(1) });
  });

  for (const [what, change] of [
    ['input', { input: new TextEncoder().encode('other work') }],
    ['agent', { agent: 'deploy' }],
    ['priority', { priority: 5 }],
    ['maxAttempts', { maxAttempts: 3 }],
    ['metadata', { metadata: { a: 'b' } }],
  ] as const) {
    it(`the same key with another ${what}: SubmissionKeyReused`, () => {
      given(keyCreated, submitted(1, { key: 'k', metadata: {} }))
        .when(submit({ key: 'k', ...change }), NOW)
        .then('SubmissionKeyReused');
    });
  }

  it("a key is scoped to its thread: the same key on another thread is another entry's", () => {
    given(keyCreated, submitted(1, { key: 'k' }))
      .when(submit({ key: 'k', thread: 't2' }), NOW)
      .then([{ ...submitted(2, { key: 'k', thread: 't2' }), at: NOW }]);
  });

  it('a pruned entry frees its key', () => {
    given(keyCreated, submitted(1, { key: 'k' }), closed(1), pruned([1], 1))
      .when(submit({ key: 'k' }), NOW)
      .then([{ ...submitted(2, { key: 'k' }), at: NOW }]);
  });

  it('strategy reject on a thread with an open entry: ThreadBusy', () => {
    given(keyCreated, submitted(1))
      .when(submit({ strategy: 'reject' }), NOW)
      .then('ThreadBusy');
  });

  it('strategy reject on a thread whose entries are all closed: a new entry', () => {
    given(keyCreated, submitted(1), closed(1))
      .when(submit({ strategy: 'reject' }), NOW)
      .then([{ ...submitted(2, { strategy: 'reject' }), at: NOW }]);
  });

  it('strategy reject looks at its own thread only', () => {
    given(keyCreated, submitted(1, { thread: 't2' }))
      .when(submit({ strategy: 'reject' }), NOW)
      .then([{ ...submitted(2, { strategy: 'reject' }), at: NOW }]);
  });

  it('a tenant holding its capacity of open entries: QueueFull', () => {
    given(keyCreated)
      .when(submit({}, { capacity: { perTenant: 2 }, counts: { tenant: 2, total: 2 } }), NOW)
      .then('QueueFull');
  });

  it('a queue holding its total capacity of open entries: QueueFull, saying nothing of other tenants', () => {
    const { decision } = given(keyCreated).when(submit({}, { capacity: { perTenant: 5, total: 3 }, counts: { tenant: 1, total: 3 } }), NOW);
    assert.equal(decision.kind === 'refused' && decision.error.code, 'QueueFull');
    assert.equal(decision.kind === 'refused' && /\d/.test(decision.error.message), false);
  });

  it('below both capacities: a new entry', () => {
    given(keyCreated)
      .when(submit({}, { capacity: { perTenant: 2, total: 3 }, counts: { tenant: 1, total: 2 } }), NOW)
      .then([{ ...submitted(1), at: NOW }]);
  });
});
