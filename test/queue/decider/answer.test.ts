/** Answer: a request of the commands topic, answered exactly once (decide.ts's `answer`), and the answers the view keeps. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RunlogError } from '../../../src/errors.ts';
import { answerKey } from '../../../src/events/keys.ts';
import type { CommandAnswered, Submitted } from '../../../src/events/types.ts';
import type { CommandOf, Request } from '../../../src/queue/commands.ts';
import { given, viewOf } from '../../support/decider-spec.ts';
import { answered, cancelled, closed, idOf, keyCreated, pruned, submitted, T0 } from './events.ts';

const NOW = T0 + 500;

function submitRequest(extra: Partial<CommandOf<'Submit'>> = {}): Request {
  const { type: _t, entryId: _e, seq: _s, at: _a, ...submission } = submitted(1);
  return {
    kind: 'submit',
    command: { type: 'Submit', submission, capacity: {}, counts: { tenant: 0, total: 0 }, freshSecret: null, ...extra },
  };
}

function cancelRequest(seq: number, tenant = 'acme'): Request {
  return { kind: 'cancel', command: { type: 'Cancel', tenant, entryId: idOf(seq), reason: 'stop' } };
}

function ask(requestId: string, request: Request): CommandOf<'Answer'> {
  return { type: 'Answer', requestId, tenant: 'acme', thread: 't1', request };
}

const atNow = (fields: Partial<CommandAnswered> & { requestId: string }): CommandAnswered => answered(fields, NOW);

describe('decider: answer', () => {
  it('a submit request: the entry, then its answer (created), in one decision', () => {
    given(keyCreated)
      .when(ask('r1', submitRequest()), NOW)
      .then([{ ...submitted(1), at: NOW }, atNow({ requestId: 'r1', entryId: idOf(1), created: true })]);
  });

  it('a repeated request id gets the first answer again, created false, and nothing else: also when the thread is busy now', () => {
    const first = answered({ requestId: 'r1', entryId: idOf(1), created: true });
    given(keyCreated, submitted(1), first)
      .when(ask('r1', submitRequest()), NOW)
      .then([atNow({ requestId: 'r1', entryId: idOf(1) })]);
  });

  it('a repeated request id of a refusal gets the same refusal, even when the command would succeed now', () => {
    const first = answered({ requestId: 'r1', code: 'QueueFull', message: 'full' });
    given(keyCreated, first)
      .when(ask('r1', submitRequest()), NOW)
      .then([atNow({ requestId: 'r1', code: 'QueueFull', message: 'full' })]);
  });

  it("request ids are per tenant: another tenant's r1 is a new request", () => {
    const theirs = answered({ requestId: 'r1', tenant: 'globex', entryId: null, code: 'QueueFull', message: 'full' });
    given(keyCreated, theirs)
      .when(ask('r1', submitRequest()), NOW)
      .then([{ ...submitted(1), at: NOW }, atNow({ requestId: 'r1', entryId: idOf(1), created: true })]);
  });

  it('refusals are answers: QueueFull, ThreadBusy, InvalidArgument', () => {
    const full = given(keyCreated).when(ask('r1', submitRequest({ capacity: { total: 1 }, counts: { tenant: 0, total: 1 } })), NOW);
    assert.equal(full.decision.kind, 'answered');
    const answer = (full.decision as { answer: CommandAnswered }).answer;
    assert.deepEqual([answer.code, answer.created, answer.entryId], ['QueueFull', false, null]);
    const busy = submitRequest();
    if (busy.kind === 'submit') busy.command.submission.strategy = 'reject';
    const busyAnswer = given(keyCreated, submitted(1)).when(ask('r2', busy), NOW).decision as {
      answer: CommandAnswered;
      events: unknown[];
    };
    assert.deepEqual([busyAnswer.answer.code, busyAnswer.events.length], ['ThreadBusy', 1]);
    const invalid: Request = { kind: 'invalid', command: 'cancel', error: new RunlogError('InvalidArgument', 'entryId must be a string') };
    given(keyCreated)
      .when(ask('r3', invalid), NOW)
      .then([atNow({ requestId: 'r3', command: 'cancel', code: 'InvalidArgument', message: 'entryId must be a string' })]);
  });

  it('a submission key naming an entry answers it, created false', () => {
    const keyed = submitRequest();
    if (keyed.kind === 'submit') keyed.command.submission.key = 'k';
    given(keyCreated, submitted(1, { key: 'k' }))
      .when(ask('r1', keyed), NOW)
      .then([atNow({ requestId: 'r1', entryId: idOf(1) })]);
  });

  it('a cancel request: CancelRequested and its answer; refused for an unknown or closed ticket', () => {
    given(keyCreated, submitted(1))
      .when(ask('c1', cancelRequest(1)), NOW)
      .then([{ ...cancelled(1), at: NOW, reason: 'stop' }, atNow({ requestId: 'c1', command: 'cancel', entryId: idOf(1), created: true })]);
    const unknown = given(keyCreated).when(ask('c2', cancelRequest(7)), NOW).decision as { answer: CommandAnswered };
    assert.deepEqual([unknown.answer.code, unknown.answer.entryId], ['TicketNotFound', null]);
    const done = given(keyCreated, submitted(1), closed(1)).when(ask('c3', cancelRequest(1)), NOW).decision as { answer: CommandAnswered };
    assert.deepEqual([done.answer.code, done.answer.entryId], ['EntryClosed', idOf(1)]);
  });
});

describe('the answers a view keeps', () => {
  const first = answered({ requestId: 'r1', entryId: idOf(1), created: true });
  const refused = answered({ requestId: 'r2', code: 'QueueFull', message: 'full' }, T0 + 1);

  it("an answer naming the tenant's entry goes with the entry when it is pruned (and its record is tombstoned with it)", () => {
    const view = viewOf([keyCreated, submitted(1), first, refused, closed(1)]);
    assert.equal(view.answers.of('acme', 'r1')?.entryId, idOf(1));
    assert.ok(view.answers.keysOf(idOf(1)).includes(answerKey('acme', 'r1')));
    const after = viewOf([keyCreated, submitted(1), first, refused, closed(1), pruned([1], 1)]);
    assert.equal(after.answers.of('acme', 'r1'), undefined);
    assert.equal(after.answers.of('acme', 'r2')?.code, 'QueueFull', 'a loose answer stays');
  });

  it('loose answers are pruned by the age of their latest answer, oldest first; a repeat makes one young again', () => {
    const again = answered({ requestId: 'r2', code: 'QueueFull', message: 'full' }, T0 + 50);
    const other = answered({ requestId: 'r3', code: 'ThreadBusy', message: 'busy' }, T0 + 10);
    const view = viewOf([keyCreated, refused, other, again]);
    assert.deepEqual(view.answers.looseDue(T0 + 20, 10), [answerKey('acme', 'r3')]);
    assert.deepEqual(view.answers.looseDue(T0 + 50, 10), [answerKey('acme', 'r3'), answerKey('acme', 'r2')]);
    given(keyCreated, refused, other, again)
      .when({ type: 'Prune', closedBy: T0 + 20, limit: 10, answerLimit: 10 }, NOW)
      .then([pruned([], 0, NOW)]);
    const decision = given(keyCreated, refused, other).when({ type: 'Prune', closedBy: T0 + 20, limit: 10, answerLimit: 1 }, NOW).decision;
    assert.deepEqual('tombstones' in decision && decision.tombstones, [answerKey('acme', 'r2')]);
  });

  it("a tenant with '/' or '%' never shares an answer key with another", () => {
    assert.notEqual(answerKey('a/b', 'c'), answerKey('a', 'b/c'));
    assert.notEqual(answerKey('a%2Fb', 'c'), answerKey('a/b', 'c'));
    assert.equal(answerKey('acme', 'r/1'), 'r/acme/r/1');
  });

  it('folding an answer twice (the same offset delivered again) changes nothing', () => {
    const view = viewOf([keyCreated, submitted(1) as Submitted, first]);
    view.apply(2n, answerKey('acme', 'r1'), { ...first, at: T0 + 99 });
    assert.equal(view.answers.of('acme', 'r1')?.at, T0);
  });
});
