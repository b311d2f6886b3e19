/**
 * Model-based property test, run on every backend: random command sequences against the
 * real RunQueue and the reference model (queue-model.ts) must answer alike; after each
 * sequence, replaying the log into fresh views gives the live view, and delivering
 * every record twice changes nothing.
 */
import assert from 'node:assert/strict';
import { describe, it, type TestContext } from 'node:test';
import fc from 'fast-check';
import { isRunlogError } from '../../src/errors.ts';
import { decodeEvent } from '../../src/events/codec.ts';
import type { RunQueue } from '../../src/queue/run-queue.ts';
import type { Lease } from '../../src/queue/types.ts';
import { PartitionView } from '../../projections/partition-view.ts';
import { snapshotView } from '../../projections/snapshot.ts';
import { assertReplayEqualsLive, queueOn, type FakeClock, type OpenLog } from './fixtures.ts';
import { QueueModel, type ModelAnswer } from './queue-model.ts';

type Command =
  | { kind: 'submit'; tenant: string; thread: string; agent: string; priority: number; key: string | null; input: string }
  | { kind: 'take'; agents: readonly string[]; holder: string; ttlMs: number }
  | { kind: 'startAttempt'; lease: number; runId: string }
  | { kind: 'yield'; lease: number; delayMs: number | null }
  | { kind: 'close'; lease: number }
  | { kind: 'cancel'; entry: number; tenant: string }
  | { kind: 'entry'; entry: number; tenant: string }
  | { kind: 'advance'; ms: number }
  | { kind: 'prune'; lifetimeMs: number; limit: number };

const tenant = fc.constantFrom('acme', 'globex');
const commandArb: fc.Arbitrary<Command> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('submit' as const), tenant, thread: fc.constantFrom('t0', 't1', 't2', 't3'), agent: fc.constantFrom('x', 'y'), priority: fc.integer({ min: 0, max: 2 }), key: fc.constantFrom(null, 'k0', 'k1'), input: fc.constantFrom('i0', 'i1') }) },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('take' as const), agents: fc.constantFrom<string[]>(['x'], ['y'], ['x', 'y']), holder: fc.constantFrom('h0', 'h1'), ttlMs: fc.integer({ min: 10, max: 100 }) }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('startAttempt' as const), lease: fc.nat(), runId: fc.constantFrom('r0', 'r1', 'r2', 'r3') }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('yield' as const), lease: fc.nat(), delayMs: fc.constantFrom(null, 0, 30) }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('close' as const), lease: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('cancel' as const), entry: fc.nat(), tenant }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('entry' as const), entry: fc.nat(), tenant }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('advance' as const), ms: fc.integer({ min: 1, max: 60 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('prune' as const), lifetimeMs: fc.integer({ min: 0, max: 100 }), limit: fc.integer({ min: 1, max: 3 }) }) },
);

interface World {
  queue: RunQueue;
  clock: FakeClock;
  model: QueueModel;
  leases: Lease[];
  entryIds: string[];
}

async function answer(action: () => Promise<unknown>): Promise<ModelAnswer> {
  try {
    return { ok: await action() };
  } catch (error) {
    if (isRunlogError(error)) return { error: error.code };
    throw error;
  }
}

async function step(world: World, command: Command): Promise<void> {
  const { queue, clock, model, leases, entryIds } = world;
  const now = clock.nowMs;
  const lease = 'lease' in command ? leases[command.lease % Math.max(leases.length, 1)] : undefined;
  const entryId = 'entry' in command ? entryIds[command.entry % Math.max(entryIds.length, 1)] : undefined;
  let real: ModelAnswer;
  let expected: ModelAnswer;
  switch (command.kind) {
    case 'submit': {
      const { tenant, thread, agent, priority, key, input } = command;
      real = await answer(async () => (await queue.submit({ tenant, thread, agent, priority, input, ...(key ? { key } : {}) })).entryId);
      expected = model.submit(tenant, thread, agent, priority, key, input, now, () => ('ok' in real ? String(real.ok) : 'refused'));
      if ('ok' in real && !entryIds.includes(String(real.ok))) entryIds.push(String(real.ok));
      break;
    }
    case 'take': {
      const taken = await answer(() => queue.take({ agents: command.agents, holder: command.holder, ttlMs: command.ttlMs }));
      real = 'ok' in taken ? { ok: (taken.ok as { lease: Lease } | null)?.lease.entryId ?? null } : taken;
      if ('ok' in taken && taken.ok !== null) leases.push((taken.ok as { lease: Lease }).lease);
      expected = model.take(command.agents, command.holder, command.ttlMs, now);
      break;
    }
    case 'startAttempt':
      if (lease === undefined) return;
      real = await answer(async () => (await queue.startAttempt(lease, command.runId)).attempt);
      expected = model.startAttempt(lease.entryId, lease.tenant, lease.holder, lease.epoch, command.runId, now);
      break;
    case 'yield':
      if (lease === undefined) return;
      real = await answer(() => queue.yield(lease, command.delayMs === null ? { kind: 'defer' } : { kind: 'retry', error: 'e', delayMs: command.delayMs }));
      expected = model.yield(lease.entryId, lease.tenant, lease.holder, lease.epoch, command.delayMs, now);
      break;
    case 'close':
      if (lease === undefined) return;
      real = await answer(async () => (await queue.close(lease, { status: 'succeeded' })).status);
      expected = model.close(lease.entryId, lease.tenant, lease.holder, lease.epoch, now);
      break;
    case 'cancel':
      if (entryId === undefined) return;
      real = await answer(async () => (await queue.cancel(command.tenant, entryId)).outcome);
      expected = model.cancel(entryId, command.tenant, now);
      break;
    case 'entry':
      if (entryId === undefined) return;
      real = await answer(async () => (await queue.entry(command.tenant, entryId)).status);
      expected = model.entryStatus(entryId, command.tenant);
      break;
    case 'advance':
      clock.advance(command.ms);
      return;
    case 'prune':
      real = await answer(() => queue.prune(command.lifetimeMs, command.limit));
      expected = model.prune(command.lifetimeMs, command.limit, now);
      break;
  }
  assert.deepEqual(real, expected, `${JSON.stringify(command)} at ${now}`);
}

/** Folding every record twice must give the same view as folding it once. */
async function assertIdempotentFold(queue: RunQueue): Promise<void> {
  for (const live of queue.views()) {
    const twice = new PartitionView(live.partition);
    for await (const record of queue.log.read(live.partition, 0n)) {
      const event = record.value === null ? null : decodeEvent(record.value);
      twice.apply(record.offset, record.key, event);
      twice.apply(record.offset, record.key, event);
    }
    assert.deepEqual(snapshotView(twice), snapshotView(live));
  }
}

export function runQueueModelProperty(name: string, openLog: OpenLog, numRuns: number): void {
  describe(`RunQueue model-based property on ${name}`, () => {
    it('random command sequences: the queue agrees with the model, and replay equals the live view', async (t: TestContext) => {
      await fc.assert(
        fc.asyncProperty(fc.array(commandArb, { minLength: 1, maxLength: 60 }), async (commands) => {
          const { queue, clock } = await queueOn(openLog, t, { partitions: 3 });
          const world: World = { queue, clock, model: new QueueModel(), leases: [], entryIds: [] };
          try {
            for (const command of commands) await step(world, command);
            await assertReplayEqualsLive(queue);
            await assertIdempotentFold(queue);
          } catch (error) {
            if (process.env.DEBUG_PROPERTY) console.error(error);
            throw error;
          } finally {
            await queue.stop();
          }
        }),
        { numRuns },
      );
    });
  });
}
