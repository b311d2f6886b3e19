/**
 * Model-based property test, run on every backend: random schedules of commands against
 * the real RunQueue and the reference model (queue-model.ts) must answer alike; after each
 * tick of several commands and after each schedule, replaying the log into fresh views gives
 * the live view, and delivering every record twice changes nothing.
 *
 * A schedule is a list of ticks. The commands of one tick are all called in the same turn,
 * without awaiting one another (as concurrent callers would), and share group commits;
 * then all of them are awaited before the next tick. The queue decides each command in
 * the turn it is called, so the model decides them in call order; each answer must be
 * what was decided for its command, whatever the later commands of its tick did.
 */
import assert from 'node:assert/strict';
import { describe, it, type TestContext } from 'node:test';
import fc from 'fast-check';
import { isRunlogError } from '../../../src/errors.ts';
import { decodeEvent } from '../../../src/events/codec.ts';
import { parseEntryId } from '../../../src/queue/entry-id.ts';
import type { RunQueue } from '../../../src/queue/run-queue.ts';
import type { Lease, RunQueueApi, Taken } from '../../../src/queue/types.ts';
import { PartitionView } from '../../../projections/partition-view.ts';
import { snapshotView } from '../../support/snapshot-view.ts';
import { assertReplayEqualsLive, queueOn, type FakeClock, type Backend } from '../fixtures.ts';
import { QueueModel, type ModelAnswer, type ModelEntry } from './queue-model.ts';

const PARTITIONS = 3;

type Command =
  | { kind: 'submit'; tenant: string; thread: string; agent: string; priority: number; key: string | null; input: string }
  /** tenants null: a take of any tenant (no filter). */
  | { kind: 'take'; agents: readonly string[]; tenants: readonly string[] | null; holder: string; ttlMs: number }
  | { kind: 'takeEntry'; entry: number; tenant: string; holder: string; ttlMs: number }
  | { kind: 'extend'; lease: number; ttlMs: number }
  | { kind: 'startAttempt'; lease: number; runId: string }
  | { kind: 'yield'; lease: number; delayMs: number | null }
  | { kind: 'close'; lease: number }
  | { kind: 'cancel'; entry: number; tenant: string }
  | { kind: 'deleteThread'; tenant: string; thread: string }
  | { kind: 'entry'; entry: number; tenant: string }
  /** Reads an id never issued: the plain `<partition>-<seq>` of an issued sequence, or an issued id with its token altered. */
  | { kind: 'probe'; entry: number; seq: number; tenant: string }
  | { kind: 'advance'; ms: number }
  | { kind: 'prune'; lifetimeMs: number; limit: number }
  | { kind: 'sweep'; lifetimeMs: number; limit: number };

const tenant = fc.constantFrom('acme', 'globex');
const thread = fc.constantFrom('t0', 't1', 't2', 't3');
const holder = fc.constantFrom('h0', 'h1');
const ttlMs = fc.integer({ min: 10, max: 100 });
const retention = { lifetimeMs: fc.integer({ min: 0, max: 100 }), limit: fc.integer({ min: 1, max: 3 }) };
const commandArb: fc.Arbitrary<Command> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('submit' as const),
      tenant,
      thread,
      agent: fc.constantFrom('x', 'y'),
      priority: fc.integer({ min: 0, max: 2 }),
      key: fc.constantFrom(null, 'k0', 'k1'),
      input: fc.constantFrom('i0', 'i1'),
    }),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('take' as const),
      agents: fc.constantFrom<string[]>(['x'], ['y'], ['x', 'y']),
      tenants: fc.constantFrom<string[] | null>(null, null, ['acme'], ['globex'], ['globex', 'acme'], ['initech']),
      holder,
      ttlMs,
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('takeEntry' as const), entry: fc.nat(), tenant, holder, ttlMs }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('extend' as const), lease: fc.nat(), ttlMs }) },
  {
    weight: 3,
    arbitrary: fc.record({ kind: fc.constant('startAttempt' as const), lease: fc.nat(), runId: fc.constantFrom('r0', 'r1', 'r2', 'r3') }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('yield' as const), lease: fc.nat(), delayMs: fc.constantFrom(null, 0, 30) }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('close' as const), lease: fc.nat() }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('cancel' as const), entry: fc.nat(), tenant }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('deleteThread' as const), tenant, thread }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('entry' as const), entry: fc.nat(), tenant }) },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant('probe' as const), entry: fc.nat(), seq: fc.integer({ min: 0, max: 8 }), tenant }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('advance' as const), ms: fc.integer({ min: 1, max: 60 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('prune' as const), ...retention }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('sweep' as const), ...retention }) },
);
const oneCommandTick = fc.array(commandArb, { minLength: 1, maxLength: 1 });
/** Mostly ticks of one command (one after another), often several at once. */
const tickArb = fc.oneof(
  { weight: 2, arbitrary: oneCommandTick },
  { weight: 3, arbitrary: fc.array(commandArb, { minLength: 2, maxLength: 5 }) },
);

interface World {
  queue: RunQueueApi;
  /** The RunQueue itself (the same object in process): sweep, and its views for replay. */
  local: RunQueue;
  clock: FakeClock;
  model: QueueModel;
  leases: Lease[];
  entryIds: string[];
}

/** One command of a tick: the queue's answer (pending) and what the model decided. */
interface Issued {
  command: Command;
  now: number;
  real: Promise<ModelAnswer>;
  expected: ModelAnswer;
}

/** The queue's answer, or the code of its refusal (anything else fails the test). */
async function answer(action: () => Promise<unknown>): Promise<ModelAnswer> {
  try {
    return { ok: await action() };
  } catch (error) {
    if (isRunlogError(error)) return { error: error.code };
    throw error;
  }
}

/** Calls the command on the queue (not awaited) and decides it in the model; null when it has nothing to act on. */
function issue(world: World, command: Command): Issued | null {
  const { queue, local, clock, model, leases, entryIds } = world;
  const now = clock.nowMs;
  const lease = 'lease' in command ? leases[command.lease % Math.max(leases.length, 1)] : undefined;
  const entryId = 'entry' in command ? entryIds[command.entry % Math.max(entryIds.length, 1)] : undefined;
  const issued = (real: () => Promise<unknown>, expected: () => ModelAnswer): Issued => ({
    command,
    now,
    real: answer(real),
    expected: expected(),
  });
  switch (command.kind) {
    case 'submit': {
      const { tenant, thread, agent, priority, key, input } = command;
      return issued(
        async () => (await queue.submit({ tenant, thread, agent, priority, input, ...(key ? { key } : {}) })).entryId,
        () => model.submit(tenant, thread, agent, priority, key, input, now),
      );
    }
    case 'take':
      return issued(
        () => {
          const { agents, tenants, holder, ttlMs } = command;
          return queue.take({ agents, holder, ttlMs, ...(tenants === null ? {} : { tenants }) });
        },
        () => model.take(command.agents, command.tenants, command.holder, command.ttlMs, now),
      );
    case 'takeEntry':
      if (entryId === undefined) return null;
      return issued(
        () => queue.takeEntry(command.tenant, entryId, { holder: command.holder, ttlMs: command.ttlMs }),
        () => model.takeEntry(entryId, command.tenant, command.holder, command.ttlMs, now),
      );
    case 'extend':
      if (lease === undefined) return null;
      return issued(
        async () => {
          const extended = await queue.extend(lease, command.ttlMs);
          assert.deepEqual(extended, { ...lease, expiresAt: extended.expiresAt }, 'extend answers the stored lease, extended');
          return extended.expiresAt;
        },
        () => model.extend(lease.entryId, lease.tenant, lease.holder, lease.epoch, command.ttlMs, now),
      );
    case 'startAttempt':
      if (lease === undefined) return null;
      return issued(
        async () => (await queue.startAttempt(lease, command.runId)).attempt,
        () => model.startAttempt(lease.entryId, lease.tenant, lease.holder, lease.epoch, command.runId, now),
      );
    case 'yield':
      if (lease === undefined) return null;
      return issued(
        () => queue.yield(lease, command.delayMs === null ? { kind: 'defer' } : { kind: 'retry', error: 'e', delayMs: command.delayMs }),
        () => model.yield(lease.entryId, lease.tenant, lease.holder, lease.epoch, command.delayMs, now),
      );
    case 'close':
      if (lease === undefined) return null;
      return issued(
        async () => closedOutcome(await queue.close(lease, { status: 'succeeded' }), lease.entryId),
        () => model.close(lease.entryId, lease.tenant, lease.holder, lease.epoch, now),
      );
    case 'cancel':
      if (entryId === undefined) return null;
      return issued(
        async () => closedOutcome(await queue.cancel(command.tenant, entryId), entryId),
        () => model.cancel(entryId, command.tenant, now),
      );
    case 'deleteThread':
      return issued(
        () => queue.deleteThread(command.tenant, command.thread),
        () => model.deleteThread(command.tenant, command.thread, now),
      );
    case 'entry':
      if (entryId === undefined) return null;
      return issued(
        async () => (await queue.entry(command.tenant, entryId)).status,
        () => model.entryStatus(entryId, command.tenant),
      );
    case 'probe': {
      if (entryId === undefined) return null;
      const probed = command.seq === 0 ? forged(entryId) : `${parseEntryId(entryId, PARTITIONS)!.partition}-${command.seq}`;
      return issued(
        () => queue.entry(command.tenant, probed),
        () => ({ error: 'TicketNotFound' }),
      );
    }
    case 'advance':
      clock.advance(command.ms);
      return null;
    case 'prune':
      return issued(
        () => queue.prune(command.lifetimeMs, command.limit),
        () => model.prune(command.lifetimeMs, command.limit, now),
      );
    case 'sweep':
      return issued(
        () => local.sweep({ ticketLifetimeMs: command.lifetimeMs, limit: command.limit }),
        () => {
          const pruned = model.prune(command.lifetimeMs, command.limit, now);
          return 'ok' in pruned ? { ok: { expired: 0, pruned: pruned.ok } } : pruned;
        },
      );
  }
}

/** `entryId` with one character of its token changed. */
function forged(entryId: string): string {
  const at = entryId.length - 3;
  return entryId.slice(0, at) + (entryId[at] === 'Q' ? 'R' : 'Q') + entryId.slice(at + 1);
}

/** A close or cancel answers the closed entry it made durable. */
function closedOutcome(entry: { entryId: string; status: string; outcome: string | null }, entryId: string): string | null {
  assert.deepEqual([entry.entryId, entry.status], [entryId, 'closed']);
  return entry.outcome;
}

/** Compares one command's answer with the model's, binding new entries to the ids the queue answered. */
async function settle(world: World, { command, now, real, expected }: Issued): Promise<void> {
  const got = await real;
  const message = `${JSON.stringify(command)} at ${now}`;
  if (command.kind === 'submit' && 'ok' in got && 'ok' in expected) {
    bind(world, expected.ok as ModelEntry, String(got.ok), message);
    if (!world.entryIds.includes(String(got.ok))) world.entryIds.push(String(got.ok));
  }
  if ((command.kind === 'take' || command.kind === 'takeEntry') && 'ok' in got && got.ok !== null) {
    const taken = got.ok as Taken;
    assert.ok(taken.lease !== null && taken.lease.entryId === taken.entry.entryId, `a Taken carries its lease: ${message}`);
    assert.deepEqual(taken.entry.lease, taken.lease, message);
    world.leases.push(taken.lease);
    got.ok = taken.lease.entryId;
  }
  assert.deepEqual(got, rendered(expected), message);
}

/** The model's answer with its entries named by the ids the queue gave them. */
function rendered(expected: ModelAnswer): ModelAnswer {
  if (!('ok' in expected) || expected.ok === null || typeof expected.ok !== 'object' || !('realId' in expected.ok)) return expected;
  return { ok: (expected.ok as ModelEntry).realId };
}

function bind(world: World, entry: ModelEntry, entryId: string, message: string): void {
  if (entry.realId !== null) return;
  assert.ok(!world.model.entries.some((other) => other.realId === entryId), `ticket id ${entryId} issued twice: ${message}`);
  assert.equal(parseEntryId(entryId, PARTITIONS)?.partition, entry.partition, `ticket ${entryId} names its thread's partition: ${message}`);
  entry.realId = entryId;
}

async function runTick(world: World, tick: readonly Command[]): Promise<void> {
  const issued = tick.map((command) => issue(world, command)).filter((item): item is Issued => item !== null);
  // Await every answer before comparing any (a failed comparison must not leave calls running).
  await Promise.allSettled(issued.map((item) => item.real));
  for (const item of issued) await settle(world, item);
  if (issued.length > 1) await assertReplayEqualsLive(world.local);
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

export function runQueueModelProperty(name: string, backend: Backend, numRuns: number): void {
  // Several commands in a tick are decided in call order only in process (Backend.sameTick).
  const sameTick = backend.sameTick ?? true;
  const title = sameTick ? 'several commands in a tick' : 'one command at a time';
  describe(`RunQueue model-based property on ${name}`, () => {
    it(`random schedules, ${title}: the queue agrees with the model, and replay equals the live view`, async (t: TestContext) => {
      await fc.assert(
        fc.asyncProperty(fc.array(sameTick ? tickArb : oneCommandTick, { minLength: 1, maxLength: 30 }), async (ticks) => {
          const fixture = await queueOn(backend, t, { partitions: PARTITIONS });
          const { queue, local, clock } = fixture;
          const world: World = { queue, local, clock, model: new QueueModel(PARTITIONS), leases: [], entryIds: [] };
          try {
            for (const tick of ticks) await runTick(world, tick);
            await assertReplayEqualsLive(local);
            await assertIdempotentFold(local);
          } catch (error) {
            if (process.env.DEBUG_PROPERTY) console.error(error);
            throw error;
          } finally {
            await fixture.stop();
          }
        }),
        { numRuns },
      );
    });
  });
}
