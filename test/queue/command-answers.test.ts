/**
 * RunQueue.answerCommand on a real file log: every command of the commands topic gets exactly
 * one CommandAnswered in the same append as its events; a repeated request id its first
 * answer; refusals are answers; an unreadable record is skipped with a warning; and replay,
 * also of the compacted log, equals the live view (answers included).
 */
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import fc from 'fast-check';
import { encodeCommand } from '../../src/events/command-codec.ts';
import type { CancelCommand, SubmitCommand } from '../../src/events/command-types.ts';
import type { CommandAnswered } from '../../src/events/types.ts';
import { decodeEvent } from '../../src/events/codec.ts';
import { openFileLog } from '../../src/log/file/file-log.ts';
import { partitionOf } from '../../src/log/partitioner.ts';
import { openRunQueueOnLog } from '../../src/queue/open-run-queue.ts';
import type { RunQueue } from '../../src/queue/run-queue.ts';
import type { RunlogWarning } from '../../src/warnings.ts';
import { assertReplayEqualsLive, FakeClock, logSize } from '../contract/fixtures.ts';
import { onCleanup, scratchDir } from '../support/cleanup.ts';

const PARTITIONS = 2;

function submitCommand(requestId: string, thread: string, extra: Partial<SubmitCommand> = {}): SubmitCommand {
  return {
    type: 'SubmitCommand',
    requestId,
    tenant: 'acme',
    thread,
    agent: 'build',
    input: new TextEncoder().encode(`work of ${requestId}`),
    key: null,
    strategy: null,
    priority: null,
    notBefore: null,
    deadline: null,
    maxAttempts: null,
    metadata: {},
    ...extra,
  };
}

function cancelCommand(requestId: string, thread: string, entryId: string): CancelCommand {
  return { type: 'CancelCommand', requestId, tenant: 'acme', thread, entryId, reason: null };
}

const home = (thread: string): number => partitionOf('acme', thread, PARTITIONS);

async function openQueue(t: TestContext, options: { capacity?: { total?: number } } = {}) {
  const dir = await scratchDir(t, 'runlog-answers-');
  const clock = new FakeClock();
  const warnings: RunlogWarning[] = [];
  const log = await openFileLog({ dir, partitions: PARTITIONS });
  const queue = await openRunQueueOnLog(log, { clock: clock.read, onWarning: (w) => warnings.push(w), capacity: options.capacity ?? {} });
  onCleanup(t, () => queue.stop());
  return { queue, clock, warnings };
}

/** Every record of a partition from `from`: offset, key and the event (null: a tombstone). */
async function recordsOf(queue: RunQueue, partition: number, from = 0n) {
  const out: Array<{ offset: bigint; key: string; type: string | null; event: ReturnType<typeof decodeEvent> | null }> = [];
  for await (const r of queue.log.read(partition, from)) {
    const event = r.value === null ? null : decodeEvent(r.value);
    out.push({ offset: r.offset, key: r.key, type: event?.type ?? null, event });
  }
  return out;
}

async function answer(queue: RunQueue, command: SubmitCommand | CancelCommand): Promise<CommandAnswered> {
  const answered = await queue.answerCommand(home(command.thread), encodeCommand(command));
  assert.ok(answered !== null);
  return answered;
}

test('a submit command: its entry and its answer in one append; a repeat gets the same ticket, created false, writing only an answer', async (t) => {
  const { queue } = await openQueue(t);
  const p = home('t1');
  const first = await answer(queue, submitCommand('r1', 't1'));
  assert.equal(first.created, true);
  assert.equal(first.code, null);
  assert.equal((await queue.entry('acme', first.entryId!)).status, 'open');
  const before = await queue.log.endOffset(p);
  const again = await answer(queue, submitCommand('r1', 't1', { agent: 'other' }));
  assert.deepEqual([again.entryId, again.created, again.code], [first.entryId, false, null]);
  const written = await recordsOf(queue, p);
  assert.deepEqual(
    written.map((r) => [r.type, r.key]),
    [
      ['TicketKeyCreated', 'p/ticket-key'],
      ['Submitted', `e/${first.entryId}/s`],
      ['CommandAnswered', 'r/acme/r1'],
      ['CommandAnswered', 'r/acme/r1'],
    ],
  );
  assert.equal(written.at(-1)!.offset, before, 'the repeat wrote its answer alone');
  assert.equal((await queue.openEntries('acme', 't1')).length, 1);
  await assertReplayEqualsLive(queue);
});

test('refusals are answers (code and message), and a cancel command cancels', async (t) => {
  const { queue } = await openQueue(t, { capacity: { total: 1 } });
  const ok = await answer(queue, submitCommand('r1', 't1'));
  const full = await answer(queue, submitCommand('r2', 't2'));
  assert.deepEqual([full.code, full.created, full.entryId], ['QueueFull', false, null]);
  const busy = await answer(queue, submitCommand('r3', 't1', { strategy: 'reject' }));
  assert.equal(busy.code, 'ThreadBusy');
  const bad = await answer(queue, submitCommand('r4', 't1', { agent: '' }));
  assert.equal(bad.code, 'InvalidArgument');
  assert.match(bad.message!, /agent/);
  const attempts = await answer(queue, submitCommand('r5', 't1', { maxAttempts: 0 }));
  assert.equal(attempts.code, 'InvalidArgument');
  const unknown = await answer(queue, cancelCommand('c1', 't1', `${home('t1')}-AAAAAAAAAAAAAAAAAAAAAA`));
  assert.deepEqual([unknown.command, unknown.code], ['cancel', 'TicketNotFound']);
  const cancelled = await answer(queue, cancelCommand('c2', 't1', ok.entryId!));
  assert.deepEqual([cancelled.command, cancelled.created, cancelled.entryId, cancelled.code], ['cancel', true, ok.entryId, null]);
  assert.equal((await queue.entry('acme', ok.entryId!)).outcome, 'cancelled');
  const closed = await answer(queue, cancelCommand('c3', 't1', ok.entryId!));
  assert.deepEqual([closed.code, closed.entryId], ['EntryClosed', ok.entryId]);
  const repeat = await answer(queue, submitCommand('r2', 't2'));
  assert.deepEqual([repeat.code, repeat.message], ['QueueFull', full.message], 'the same refusal, though capacity is free now');
  await assertReplayEqualsLive(queue);
});

test('a command on the wrong partition is refused there; a damaged record naming its request id is refused; garbage is skipped with a warning', async (t) => {
  const { queue, warnings } = await openQueue(t);
  const thread = 't1';
  const elsewhere = 1 - home(thread);
  const wrong = await queue.answerCommand(elsewhere, encodeCommand(submitCommand('r1', thread)));
  assert.equal(wrong?.code, 'InvalidArgument');
  assert.match(wrong!.message!, /partition/);
  const bytes = encodeCommand(submitCommand('r2', thread));
  const damaged = await queue.answerCommand(home(thread), bytes.subarray(0, bytes.length - 5));
  assert.deepEqual([damaged?.requestId, damaged?.code, damaged?.command], ['r2', 'InvalidArgument', 'submit']);
  const size = await logSize(queue.log);
  assert.equal(await queue.answerCommand(0, Uint8Array.of(1, 2, 3)), null);
  assert.equal(await queue.answerCommand(0, null), null);
  assert.equal(await logSize(queue.log), size, 'nothing written for an unreadable record');
  assert.deepEqual(
    warnings.map((w) => w.code),
    ['RUNLOG_COMMAND', 'RUNLOG_COMMAND'],
  );
  assert.equal((await queue.metrics()).warnings.RUNLOG_COMMAND, 2);
});

test('a command whose request id or tenant is no name cannot be answered under them: skipped with a warning, and the next is answered', async (t) => {
  // Before: a refusal answered under a request id of 700,000 characters was a record past Kafka's limit, and
  // the commands behind it on its partition were never answered (the Kafka tester).
  const { queue, warnings } = await openQueue(t);
  const thread = 't1';
  const huge = 'r'.repeat(700_000);
  const size = await logSize(queue.log);
  assert.equal(await queue.answerCommand(home(thread), encodeCommand(submitCommand(huge, thread))), null);
  assert.equal(await queue.answerCommand(home(thread), submitCommand('', thread)), null);
  const otherTenant = { ...submitCommand('r1', thread), tenant: 'a'.repeat(2000) };
  assert.equal(await queue.answerCommand(partitionOf(otherTenant.tenant, thread, PARTITIONS), otherTenant), null);
  assert.equal(await logSize(queue.log), size, 'nothing written');
  assert.deepEqual(
    warnings.map((w) => [w.code, /cannot be answered under its ids: (requestId|tenant) /.test(w.message)]),
    [
      ['RUNLOG_COMMAND', true],
      ['RUNLOG_COMMAND', true],
      ['RUNLOG_COMMAND', true],
    ],
  );
  assert.ok(
    warnings.every((w) => w.message.length < 2_000),
    'a warning quotes a long id cut short',
  );
  // A thread that is no name is refused under the request id, the answer naming no thread.
  const longThread = 't'.repeat(700_000);
  const refused = await queue.answerCommand(partitionOf('acme', longThread, PARTITIONS), submitCommand('r2', longThread));
  assert.deepEqual([refused?.requestId, refused?.thread, refused?.code], ['r2', '', 'InvalidArgument']);
  const next = await queue.answerCommand(home(thread), submitCommand('r3', thread));
  assert.equal(next?.created, true, 'the next command of the partition is answered');
  await assertReplayEqualsLive(queue);
});

test('the file log cannot commit consumed offsets: InvalidArgument before anything is folded or written', async (t) => {
  const { queue } = await openQueue(t);
  const size = await logSize(queue.log);
  const consumed = { group: 'g.commands', topic: 't.commands', partition: home('t1'), offset: 1n };
  await assert.rejects(queue.answerCommand(home('t1'), encodeCommand(submitCommand('r1', 't1')), { consumed }), {
    code: 'InvalidArgument',
    message: /cannot commit consumed offsets/,
  });
  assert.equal(await logSize(queue.log), size);
  assert.equal((await answer(queue, submitCommand('r1', 't1'))).created, true, 'nothing of the refused call was folded');
  await assert.rejects(queue.log.append(0, [], { consumed }), { code: 'InvalidArgument' });
});

test('pruning an entry tombstones its answers; a refusal is pruned once older than the lifetime; a later repeat is a new request', async (t) => {
  const { queue, clock } = await openQueue(t, { capacity: { total: 1 } });
  const ok = await answer(queue, submitCommand('r1', 't1'));
  const full = await answer(queue, submitCommand('r2', 't1'));
  assert.equal(full.code, 'QueueFull');
  await queue.cancel('acme', ok.entryId!);
  clock.advance(1_000);
  assert.equal(await queue.prune(1_000, 10), 1);
  const tombstoned = (await recordsOf(queue, home('t1'))).filter((r) => r.event === null).map((r) => r.key);
  assert.ok(tombstoned.includes('r/acme/r1') && tombstoned.includes('r/acme/r2'), tombstoned.join(' '));
  await assertReplayEqualsLive(queue);
  await queue.log.compact(home('t1'));
  await assertReplayEqualsLive(queue);
  const fresh = await answer(queue, submitCommand('r1', 't1'));
  assert.equal(fresh.created, true);
  assert.notEqual(fresh.entryId, ok.entryId);
});

test('property: any schedule of commands, repeats, closes and prunes replays (full and compacted) to the live view', async (t) => {
  const step = fc.oneof(
    fc.record({ kind: fc.constant('submit' as const), request: fc.nat(6), thread: fc.nat(3), reject: fc.boolean() }),
    fc.record({ kind: fc.constant('cancel' as const), request: fc.nat(6), target: fc.nat(8) }),
    fc.record({ kind: fc.constant('close' as const) }),
    fc.record({ kind: fc.constant('prune' as const), advance: fc.nat(3) }),
  );
  let run = 0;
  await fc.assert(
    fc.asyncProperty(fc.array(step, { maxLength: 25 }), async (steps) => {
      const sub = { after: (fn: () => unknown) => t.after(fn as () => void) };
      const { queue, clock } = await openQueue(sub as unknown as TestContext, { capacity: { total: 4 } });
      const ids: string[] = [];
      for (const s of steps) {
        clock.advance(10);
        if (s.kind === 'submit') {
          const a = await answer(queue, submitCommand(`r${s.request}`, `t${s.thread}`, s.reject ? { strategy: 'reject' } : {}));
          if (a.entryId !== null) ids.push(a.entryId);
        } else if (s.kind === 'cancel' && ids.length > 0) {
          const entryId = ids[s.target % ids.length]!;
          const entry = await queue.entry('acme', entryId).catch(() => null);
          if (entry !== null) await answer(queue, cancelCommand(`c${s.request}`, entry.thread, entryId));
        } else if (s.kind === 'close') {
          const taken = await queue.take({ agents: ['build'], holder: 'w', ttlMs: 1_000 });
          if (taken !== null) await queue.close(taken.lease, { status: 'succeeded' });
        } else if (s.kind === 'prune') {
          clock.advance(s.advance * 100);
          await queue.prune(150, 3);
        }
      }
      await assertReplayEqualsLive(queue);
      for (let p = 0; p < PARTITIONS; p++) await queue.log.compact(p);
      await assertReplayEqualsLive(queue);
      await queue.stop();
      run++;
    }),
    { numRuns: 25 },
  );
  t.diagnostic(`${run} schedules`);
});
