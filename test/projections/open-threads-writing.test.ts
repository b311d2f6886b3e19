/**
 * A snapshot's open entries written a stretch at a time (projections/open-threads-writing.ts),
 * the queue taking, starting, closing, yielding, cancelling, deleting threads and submitting
 * between stretches, are byte for byte what the one-turn writer (open-entries-writer.ts) wrote
 * when the writing began; an entry the compiled writer declines is written by avsc as the
 * one-turn path writes it; a released writing stops watching the view.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { isRunlogError } from '../../src/errors.ts';
import { decodeSnapshotState, decodeSnapshotThreads, encodeSnapshotState } from '../../src/events/snapshot-codec.ts';
import type { SnapshotThread } from '../../src/events/snapshot-types.ts';
import { openRunQueue } from '../../src/queue/open-run-queue.ts';
import type { RunQueue } from '../../src/queue/run-queue.ts';
import type { Lease } from '../../src/queue/types.ts';
import { writeOpenThreads } from '../../projections/open-entries-writer.ts';
import { openThreadsOf } from '../../projections/open-snapshot.ts';
import { OPEN_STRETCH, OpenThreadsWriting } from '../../projections/open-threads-writing.ts';
import type { PartitionView } from '../../projections/partition-view.ts';
import { viewStateToWrite } from '../../projections/view-snapshot.ts';
import { FakeClock } from '../contract/fixtures.ts';

const THREADS = 5;

const step = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('submit' as const),
      thread: fc.nat(THREADS - 1),
      key: fc.option(fc.nat(5)),
      deadline: fc.option(fc.integer({ min: 100, max: 1_000 })),
      input: fc.uint8Array({ maxLength: 80 }),
    }),
  },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('take' as const), start: fc.boolean() }) },
  {
    weight: 3,
    arbitrary: fc.record({ kind: fc.constant('finish' as const), how: fc.constantFrom('succeeded', 'failed', 'retry', 'defer') }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('cancel' as const), target: fc.nat(30) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('deleteThread' as const), thread: fc.nat(THREADS - 1) }) },
);
type Step = typeof step extends fc.Arbitrary<infer S> ? S : never;

/** A queue on a memory log and what its steps need to remember. */
class Schedule {
  readonly clock = new FakeClock();
  readonly leases: Lease[] = [];
  readonly ids: string[] = [];
  #runs = 0;

  constructor(readonly queue: RunQueue) {}

  async run(s: Step): Promise<void> {
    const { queue, clock } = this;
    clock.advance(3);
    if (s.kind === 'submit') {
      const submitted = await queue
        .submit({
          tenant: 'acme',
          thread: `t${s.thread}`,
          agent: 'build',
          input: s.input,
          ...(s.key === null ? {} : { key: `k${s.key}` }),
          ...(s.deadline === null ? {} : { deadline: clock.nowMs + s.deadline }),
        })
        .catch((error: unknown) => assert.ok(isRunlogError(error, 'SubmissionKeyReused'), String(error)));
      if (submitted !== undefined) this.ids.push(submitted.entryId);
    } else if (s.kind === 'take') {
      const taken = await queue.take({ agents: ['build'], holder: 'w', ttlMs: 10_000 });
      if (taken === null) return;
      if (s.start) await queue.startAttempt(taken.lease, `run-${this.#runs++}`);
      this.leases.push(taken.lease);
    } else if (s.kind === 'finish') {
      const lease = this.leases.shift();
      if (lease === undefined) return;
      const done =
        s.how === 'succeeded' || s.how === 'failed'
          ? queue.close(lease, s.how === 'succeeded' ? { status: 'succeeded', result: 'ok' } : { status: 'failed', error: 'no' })
          : queue.yield(lease, s.how === 'retry' ? { kind: 'retry', error: 'again', delayMs: 5 } : { kind: 'defer' });
      await done.catch((error: unknown) => assert.ok(isRunlogError(error), String(error))); // cancelled or deleted meanwhile
    } else if (s.kind === 'cancel') {
      const entryId = this.ids[s.target % Math.max(1, this.ids.length)];
      if (entryId !== undefined)
        await queue.cancel('acme', entryId).catch((error: unknown) => assert.ok(isRunlogError(error), String(error)));
    } else {
      await queue.deleteThread('acme', `t${s.thread}`);
    }
  }
}

/** The `threads` field as open-entries-writer.ts writes it in one turn, now. */
function oneTurnBytes(view: PartitionView): Buffer {
  const threads = [...view.threads.values()]
    .map((thread) => ({ tenant: thread.tenant, thread: thread.thread, open: thread.openEntries() }))
    .filter((thread) => thread.open.length > 0);
  const buf = Buffer.alloc(1 << 20);
  const end = writeOpenThreads(threads, buf, 0);
  assert.ok(end > 0, 'the one-turn writer wrote the threads');
  return buf.subarray(0, end);
}

function writtenBytes(writing: OpenThreadsWriting): Buffer {
  const bytes = Buffer.alloc(writing.estimatedBytes);
  assert.equal(writing.writeAvro(bytes, 0), bytes.length);
  return bytes;
}

/** Threads as plain values (inputs and results as arrays), to compare what avsc decoded with what entryOf built. */
function plain(threads: readonly SnapshotThread[]): unknown {
  const bytes = (value: unknown): unknown => {
    if (value instanceof Uint8Array) return [...value];
    const json = value as { type?: unknown; data?: unknown } | null; // a Buffer, as its toJSON gave it
    return json !== null && typeof json === 'object' && json.type === 'Buffer' && Array.isArray(json.data) ? json.data : value;
  };
  return JSON.parse(JSON.stringify(threads, (_key, value: unknown) => bytes(value)));
}

test('property: written a stretch at a time, the queue going on between stretches, the open entries are the bytes of one turn when the writing began', async (t) => {
  const keptBefore = OPEN_STRETCH.kept;
  let writings = 0;
  await fc.assert(
    fc.asyncProperty(
      fc.array(step, { minLength: 10, maxLength: 60 }),
      fc.array(step, { minLength: 5, maxLength: 40 }),
      fc.integer({ min: 1, max: 3 }),
      async (before, during, stretch) => {
        const queue = await openRunQueue({ log: { kind: 'memory' }, partitions: 1, clock: new FakeClock().read });
        const schedule = new Schedule(queue);
        try {
          for (const s of before) await schedule.run(s);
          const view = queue.views()[0]!;
          const expected = oneTurnBytes(view);
          const expectedValues = plain(openThreadsOf(view));
          const writing = new OpenThreadsWriting(view, stretch);
          try {
            const rest = [...during];
            while (writing.writeStretch()) for (const s of rest.splice(0, 2)) await schedule.run(s);
            for (const s of rest) await schedule.run(s);
            const written = writtenBytes(writing);
            assert.deepEqual(written, expected, 'the bytes of one turn at the start');
            assert.deepEqual(plain(writing.values()), expectedValues, 'and their values');
            writings++;
          } finally {
            writing.release();
          }
        } finally {
          await queue.stop();
        }
      },
    ),
    { numRuns: 80 },
  );
  const kept = OPEN_STRETCH.kept - keptBefore;
  t.diagnostic(`${writings} writings; ${kept} open entries kept as they were before a change`);
  assert.ok(kept > 5, 'entries were changed before their turn came');
});

test('an open entry the compiled writer declines is written by avsc, as the one-turn path writes the state', async () => {
  const queue = await openRunQueue({ log: { kind: 'memory' }, partitions: 1 });
  try {
    for (let i = 0; i < 3; i++) await queue.submit({ tenant: 'acme', thread: `t${i}`, agent: 'build', input: `input ${i}` });
    const view = queue.views()[0]!;
    const middle = [...view.entries.values()][1]!;
    // Not well-formed UTF-16: the compiled writer declines it (body-writer.ts); no submission could carry it.
    (middle as { key: string | null }).key = 'key-\ud800';
    const oneTurn = decodeSnapshotState(encodeSnapshotState(viewStateToWrite(view))).threads;
    const writing = new OpenThreadsWriting(view, 1);
    while (writing.writeStretch());
    const threads = decodeSnapshotThreads(writtenBytes(writing));
    assert.deepEqual(plain(threads), plain(oneTurn));
    assert.match(threads[1]!.open[0]!.key!, /^key-\ufffd+$/, 'as avsc writes it');
  } finally {
    await queue.stop();
  }
});

test('a writing released before it is done stops watching the view: later changes keep nothing', async () => {
  const queue = await openRunQueue({ log: { kind: 'memory' }, partitions: 1 });
  try {
    for (let i = 0; i < 4; i++) await queue.submit({ tenant: 'acme', thread: `t${i}`, agent: 'build', input: 'x' });
    const view = queue.views()[0]!;
    const writing = new OpenThreadsWriting(view, 1);
    assert.equal(writing.writeStretch(), true, 'one entry written, three to go');
    const taken = await queue.take({ agents: ['build'], holder: 'w', ttlMs: 1_000 });
    assert.ok(taken !== null);
    const kept = OPEN_STRETCH.kept;
    writing.release();
    for (let i = 0; i < 3; i++) await queue.take({ agents: ['build'], holder: 'w', ttlMs: 1_000 });
    assert.equal(OPEN_STRETCH.kept, kept, 'nothing kept once released');
    assert.throws(() => writing.estimatedBytes, /not all written/);
  } finally {
    await queue.stop();
  }
});
