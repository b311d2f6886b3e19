/**
 * Values are owned (DESIGN invariant 10), on every backend: nothing a caller does to a
 * value it passed in or got back (input, result, metadata, attempts, lease, a whole entry)
 * reaches the view or the log. Each case mutates what it can, then checks the queue's
 * answers, an idempotent resubmit, and that replay equals the live view.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Entry } from '../../../src/queue/types.ts';
import { assertReplayEqualsLive, queueOn, submitOf, type Backend } from '../fixtures.ts';

const TTL = 30_000;
const text = (bytes: Uint8Array | null): string | null => (bytes === null ? null : new TextDecoder().decode(bytes));

/** Overwrites everything mutable in an answered entry. */
function scribble(entry: Entry): void {
  entry.input.fill(0x21);
  entry.result?.fill(0x21);
  entry.metadata.injected = 'yes';
  for (const key of Object.keys(entry.metadata)) if (key !== 'injected') entry.metadata[key] = 'changed';
  for (const attempt of entry.attempts) attempt.runId = 'changed';
  entry.attempts.push({ runId: 'extra', attempt: 99, epoch: 99, startedAt: 0 });
  if (entry.lease !== null) entry.lease.thread = 'changed';
}

export function runQueueOwnedValues(name: string, backend: Backend): void {
  describe(`RunQueue values are owned on ${name}`, () => {
    it('changing what entry() and take() answered changes nothing: reads, an idempotent resubmit, replay', async (t) => {
      const { queue, local } = await queueOn(backend, t);
      const request = submitOf('acme', 't1', { key: 'k1', input: 'original input', metadata: { a: 'b' } });
      const ticket = await queue.submit(request);
      scribble(await queue.entry('acme', ticket.entryId));
      const taken = (await queue.take({ agents: ['build'], holder: 'w', ttlMs: TTL }))!;
      scribble(taken.entry);
      taken.lease.holder = 'someone else';
      const entry = await queue.entry('acme', ticket.entryId);
      assert.equal(text(entry.input), 'original input');
      assert.deepEqual(entry.metadata, { a: 'b' });
      assert.equal(entry.lease!.thread, 't1');
      assert.equal(entry.lease!.holder, 'w');
      const again = await queue.submit(request);
      assert.deepEqual([again.entryId, again.created], [ticket.entryId, false]);
      await assertReplayEqualsLive(local);
    });

    it('changing what the caller passed in after the call changes nothing (input, metadata, result)', async (t) => {
      const { queue, local } = await queueOn(backend, t);
      const input = new TextEncoder().encode('the input bytes');
      const metadata = { trace: 'abc' };
      const ticket = await queue.submit(submitOf('acme', 't1', { input, metadata }));
      input.fill(0);
      metadata.trace = 'changed';
      const taken = (await queue.take({ agents: ['build'], holder: 'w', ttlMs: TTL }))!;
      const result = new TextEncoder().encode('the result');
      const closing = queue.close(taken.lease, { status: 'succeeded', result });
      result.fill(0);
      await closing;
      const entry = await queue.entry('acme', ticket.entryId);
      assert.equal(text(entry.input), 'the input bytes');
      assert.deepEqual(entry.metadata, { trace: 'abc' });
      assert.equal(text(entry.result), 'the result');
      await assertReplayEqualsLive(local);
    });

    it('submitBatch owns its inputs: changing the caller’s buffer, or one answered entry’s input, changes no other', async (t) => {
      const { queue, local } = await queueOn(backend, t);
      const buffer = new TextEncoder().encode('first|second|third');
      const inputs = [buffer.subarray(0, 5), buffer.subarray(6, 12), 'third as text'];
      const answers = await queue.submitBatch(inputs.map((input, i) => submitOf('acme', `t${i}`, { input })));
      buffer.fill(0);
      const ids = answers.map((answer) => ('ticket' in answer ? answer.ticket.entryId : assert.fail(String(answer.error))));
      scribble(await queue.entry('acme', ids[1]!));
      const entries = await Promise.all(ids.map((id) => queue.entry('acme', id)));
      assert.deepEqual(
        entries.map((entry) => text(entry.input)),
        ['first', 'second', 'third as text'],
      );
      await assertReplayEqualsLive(local);
    });

    it('changing what close(), cancel(), startAttempt(), extend() and openEntries() answered changes nothing', async (t) => {
      const { queue, local } = await queueOn(backend, t);
      const ticket = await queue.submit(submitOf('acme', 't1', { input: 'one', metadata: { m: '1' } }));
      const other = await queue.submit(submitOf('acme', 't1', { input: 'two' }));
      const taken = (await queue.take({ agents: ['build'], holder: 'w', ttlMs: TTL }))!;
      for (const open of await queue.openEntries('acme', 't1')) scribble(open);
      const attempt = await queue.startAttempt(taken.lease, 'run-1');
      attempt.runId = 'changed';
      const extended = await queue.extend(taken.lease, TTL);
      extended.thread = 'changed';
      extended.epoch = 7;
      const closed = await queue.close(taken.lease, { status: 'succeeded', result: 'done' });
      scribble(closed);
      scribble(await queue.cancel('acme', other.entryId));
      const entry = await queue.entry('acme', ticket.entryId);
      assert.equal(text(entry.input), 'one');
      assert.equal(text(entry.result), 'done');
      assert.deepEqual(entry.metadata, { m: '1' });
      assert.deepEqual(
        entry.attempts.map((a) => a.runId),
        ['run-1'],
      );
      assert.equal(text((await queue.entry('acme', other.entryId)).input), 'two');
      await assertReplayEqualsLive(local);
    });

    it('every awaitClosed waiter gets an entry of its own', async (t) => {
      const { queue, local } = await queueOn(backend, t);
      const ticket = await queue.submit(submitOf('acme', 't1', { input: 'shared?', metadata: { m: '1' } }));
      const waiters = Array.from({ length: 1000 }, () => queue.awaitClosed('acme', ticket.entryId));
      const taken = (await queue.take({ agents: ['build'], holder: 'w', ttlMs: TTL }))!;
      await queue.startAttempt(taken.lease, 'run-1');
      await queue.close(taken.lease, { status: 'succeeded', result: 'out' });
      const answers = (await Promise.all(waiters)) as Entry[];
      assert.equal(new Set(answers).size, answers.length, 'one object per waiter');
      scribble(answers[0]!);
      for (const answer of answers.slice(1)) {
        assert.equal(text(answer.input), 'shared?');
        assert.equal(text(answer.result), 'out');
        assert.deepEqual(answer.metadata, { m: '1' });
        assert.deepEqual(
          answer.attempts.map((a) => a.runId),
          ['run-1'],
        );
      }
      assert.equal(text((await queue.entry('acme', ticket.entryId)).result), 'out');
      await assertReplayEqualsLive(local);
    });
  });
}
