/**
 * A snapshot's open entries written straight from the view (projections/open-entries-writer.ts)
 * are the bytes the compiled writer writes from the entries as values (entryOf), and it
 * declines exactly where that writer declines:
 *   - views of random schedules (submits with keys, metadata, priorities, delays, deadlines;
 *     takes, attempts, defers, retries, closes), on a queue: the state encoded both ways is
 *     byte for byte the same, and decodes to viewState's;
 *   - every field of an entry, a lease, an attempt and a thread holding every odd value: the
 *     same end position (or the same decline) and the same bytes.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { inspect } from 'node:util';
import fc from 'fast-check';
import { isRunlogError } from '../../src/errors.ts';
import { compileBodyWriter, resetShort } from '../../src/events/body-writer.ts';
import { RELEASED_SNAPSHOT_SCHEMAS, decodeSnapshotState, encodeSnapshotState } from '../../src/events/snapshot-codec.ts';
import type { PartitionState, SnapshotEntry } from '../../src/events/snapshot-types.ts';
import { openRunQueue } from '../../src/queue/open-run-queue.ts';
import type { Lease } from '../../src/queue/types.ts';
import type { EntryState } from '../../projections/entry-state.ts';
import { writeOpenThreads, type OpenThread } from '../../projections/open-entries-writer.ts';
import { viewState, viewStateToWrite } from '../../projections/view-snapshot.ts';
import { FakeClock } from '../contract/fixtures.ts';
import { ODD_VALUES } from '../support/odd-values.ts';

const step = fc.oneof(
  fc.record({
    kind: fc.constant('submit' as const),
    thread: fc.nat(3),
    key: fc.option(fc.nat(5)),
    priority: fc.integer({ min: -3, max: 3 }),
    delay: fc.option(fc.nat(50)),
    deadline: fc.option(fc.integer({ min: 100, max: 1_000 })),
    metadata: fc.dictionary(fc.constantFrom('a', 'b', 'é'), fc.string({ maxLength: 5 }), { noNullPrototype: true, maxKeys: 2 }),
    input: fc.uint8Array({ maxLength: 80 }),
  }),
  fc.record({ kind: fc.constant('take' as const), start: fc.boolean() }),
  fc.record({ kind: fc.constant('finish' as const), how: fc.constantFrom('succeeded', 'retry', 'defer') }),
);

test('open entries written straight from a view are the bytes of the entries as values', async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(step, { maxLength: 40 }), async (steps) => {
      const clock = new FakeClock();
      const queue = await openRunQueue({ log: { kind: 'memory' }, partitions: 1, clock: clock.read });
      try {
        const leases: Lease[] = [];
        let n = 0;
        for (const s of steps) {
          clock.advance(3);
          if (s.kind === 'submit') {
            const submitted = queue.submit({
              tenant: 'acme',
              thread: `t${s.thread}`,
              agent: 'build',
              input: s.input,
              priority: s.priority,
              metadata: s.metadata,
              ...(s.key === null ? {} : { key: `k${s.key}` }),
              ...(s.delay === null ? {} : { notBefore: clock.nowMs + s.delay }),
              ...(s.deadline === null ? {} : { deadline: clock.nowMs + s.deadline }),
            });
            // A key met again with another submission is refused (SubmissionKeyReused): nothing written.
            await submitted.catch((error: unknown) => assert.ok(isRunlogError(error, 'SubmissionKeyReused'), String(error)));
          } else if (s.kind === 'take') {
            const taken = await queue.take({ agents: ['build'], holder: 'w', ttlMs: 10_000 });
            if (taken === null) continue;
            if (s.start) await queue.startAttempt(taken.lease, `run-${n++}`);
            leases.push(taken.lease);
          } else {
            const lease = leases.shift();
            if (lease === undefined) continue;
            if (s.how === 'succeeded') await queue.close(lease, { status: 'succeeded', result: 'ok' });
            else if (s.how === 'retry') await queue.yield(lease, { kind: 'retry', error: 'again', delayMs: 5 });
            else await queue.yield(lease, { kind: 'defer' });
          }
        }
        const view = queue.views()[0]!;
        const direct = encodeSnapshotState(viewStateToWrite(view));
        const asValues = encodeSnapshotState(viewState(view));
        assert.deepEqual(Buffer.from(direct), Buffer.from(asValues));
        assert.deepEqual(decodeSnapshotState(direct).threads.length, viewState(view).threads.length);
      } finally {
        await queue.stop();
      }
    }),
    { numRuns: 60 },
  );
});

const schema = RELEASED_SNAPSHOT_SCHEMAS.filter((s) => s.eventType === 'PartitionState').at(-1)!.schema;
const writer = compileBodyWriter(schema)!;

const ENTRY: SnapshotEntry = {
  entryId: 'e-1',
  seq: 1,
  agent: 'build',
  input: new Uint8Array([1, 2, 3]),
  key: 'k',
  priority: 0,
  deadline: 500,
  maxAttempts: 3,
  metadata: { a: 'b' },
  submittedAt: 100,
  submittedOffset: 0,
  notBefore: null,
  lease: { holder: 'w', epoch: 2, expiresAt: 900 },
  lastEpoch: 2,
  deferredAttempts: 1,
  attempts: [{ runId: 'r', attempt: 1, epoch: 1, startedAt: 120, offset: 3 }],
  outcome: null,
  result: null,
  error: null,
  closedAt: null,
};

const EMPTY_STATE: PartitionState = {
  lastAt: 0,
  issuedThrough: 0,
  ticketKey: null,
  metrics: {
    enqueued: 0,
    processed: 0,
    succeeded: 0,
    failed: 0,
    retried: 0,
    expired: 0,
    cancelled: 0,
    dropped: 0,
    totalWaitMs: 0,
    maxWaitMs: 0,
    totalExecMs: 0,
    maxExecMs: 0,
  },
  threads: [],
  closedEntries: [],
  closedIndex: [],
  submissionKeys: [],
  answers: [],
};

/** An entry as the view holds it (the fields writeOpenThreads reads): attempts without offsets, their offsets beside. */
function asEntryState(entry: SnapshotEntry): EntryState {
  const attempts = entry.attempts.map(({ runId, attempt, epoch, startedAt }) => ({ runId, attempt, epoch, startedAt }));
  return { ...entry, attempts, attemptOffsets: entry.attempts.map((attempt) => attempt.offset) } as unknown as EntryState;
}

/** The compiled writer's result for `state` with its threads as values, then written straight: [end, bytes] each. */
function bothWays(tenant: unknown, thread: unknown, entry: SnapshotEntry): [[number, string], [number, string]] {
  // A value that throws when written (a bigint where an int is) is avsc's to refuse (the codec catches it): the same outcome.
  const run = (threads: unknown): [number, string] => {
    const buf = Buffer.alloc(4096);
    resetShort();
    try {
      const end = writer({ ...EMPTY_STATE, threads } as unknown as Record<string, unknown>, buf, 0);
      return [end, end < 0 ? '' : buf.subarray(0, end).toString('hex')];
    } catch (error) {
      return [-2, (error as Error).name];
    }
  };
  const open: OpenThread[] = [{ tenant, thread, open: [asEntryState(entry)] } as OpenThread];
  return [run([{ tenant, thread, open: [entry] }]), run({ writeAvro: (buf: Buffer, pos: number) => writeOpenThreads(open, buf, pos) })];
}

test('every field holding every odd value: written straight, the same bytes or the same decline as from values', () => {
  const fields = Object.keys(ENTRY) as Array<keyof SnapshotEntry>;
  let declined = 0;
  for (const odd of ODD_VALUES) {
    const cases: Array<[string, unknown, unknown, SnapshotEntry]> = [
      ['tenant', odd, 't', ENTRY],
      ['thread', 'acme', odd, ENTRY],
      ...fields
        .filter((f) => f !== 'attempts')
        .map((f): [string, unknown, unknown, SnapshotEntry] => [f, 'acme', 't', { ...ENTRY, [f]: odd }]),
      ...(['holder', 'epoch', 'expiresAt'] as const).map((f): [string, unknown, unknown, SnapshotEntry] => [
        `lease.${f}`,
        'acme',
        't',
        { ...ENTRY, lease: { ...ENTRY.lease!, [f]: odd } },
      ]),
      ...(['runId', 'attempt', 'epoch', 'startedAt', 'offset'] as const).map((f): [string, unknown, unknown, SnapshotEntry] => [
        `attempts[0].${f}`,
        'acme',
        't',
        { ...ENTRY, attempts: [{ ...ENTRY.attempts[0]!, [f]: odd }] },
      ]),
    ];
    for (const [name, tenant, thread, entry] of cases) {
      const [fromValues, direct] = bothWays(tenant, thread, entry);
      assert.deepEqual(direct, fromValues, `${name} = ${inspect(odd)}`);
      if (fromValues[0] === -1) declined++;
    }
  }
  assert.ok(declined > 0, 'some odd values are declined');
});
