/**
 * Closed entries leave the view for the ticket index; entry() reads them from a cache or
 * back from the log. Property: random work and random reads on two queues over two real file
 * logs, one with a tiny closed-entry cache (nearly every read goes to the log) and one with a
 * huge one, answer exactly the same (ids aside: each partition draws its own ticket key).
 * Then: a pruned ticket reads TicketExpired, also after a restart and a compaction, and a
 * submission key or run id of a closed entry keeps working until it is pruned.
 */
import assert from 'node:assert/strict';
import { describe, it, type TestContext } from 'node:test';
import fc from 'fast-check';
import type { EventLog, ReadOptions } from '../../src/log/event-log.ts';
import { openFileLog } from '../../src/log/file/file-log.ts';
import { openRunQueueOnLog } from '../../src/queue/open-run-queue.ts';
import type { RunQueue } from '../../src/queue/run-queue.ts';
import type { Ticket } from '../../src/queue/types.ts';
import { FakeClock, submitOf } from '../contract/fixtures.ts';
import { onCleanup, scratchDir } from '../support/cleanup.ts';
import { wrapLog } from '../support/wrap-log.ts';
import { closedEntryLifecycle } from './closed-entry-lifecycle.ts';

const TENANTS = ['acme', 'globex'];
/** No cache at all, and one about one entry big. */
const TINY = [0, 700];
const HUGE = 1024 * 1024 * 1024;

type Op =
  | { kind: 'submit'; thread: number; tenant: number; key: number | null; input: number }
  | { kind: 'finish'; entry: number; outcome: 'succeeded' | 'failed'; retries: number; defer: boolean }
  | { kind: 'cancel'; entry: number }
  | { kind: 'read'; entry: number; asOther: boolean }
  | { kind: 'await'; entry: number }
  | { kind: 'resubmit'; entry: number; same: boolean }
  | { kind: 'reuseRunId'; entry: number; of: number }
  | { kind: 'prune'; ageMs: number }
  | { kind: 'tick'; ms: number };

const op: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('submit'),
      thread: fc.nat(3),
      tenant: fc.nat(1),
      key: fc.option(fc.nat(3)),
      input: fc.nat(2),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('finish'),
      entry: fc.nat(40),
      outcome: fc.constantFrom('succeeded', 'failed'),
      retries: fc.nat(2),
      defer: fc.boolean(),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('cancel'), entry: fc.nat(40) }) },
  { weight: 5, arbitrary: fc.record({ kind: fc.constant('read'), entry: fc.nat(40), asOther: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('await'), entry: fc.nat(40) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('resubmit'), entry: fc.nat(40), same: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('reuseRunId'), entry: fc.nat(40), of: fc.nat(40) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('prune'), ageMs: fc.nat(3_000) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('tick'), ms: fc.integer({ min: 1, max: 1_000 }) }) },
);

/** One queue under test, with what it issued: ids by submission order, and the run ids each entry ran. */
interface Subject {
  queue: RunQueue;
  ids: string[];
  submitted: { tenant: string; thread: string; key: string | null; input: string }[];
  runIds: string[][];
  /** Records read one at a time (a closed entry read back from the log). */
  singleReads: { count: number };
}

/** `kind`: what the log says it is ('kafka': a file log posing as one whose read-back is a fetch, to see the cache policy). */
async function subject(t: TestContext, clock: FakeClock, closedCacheBytes: number, kind = 'file'): Promise<Subject> {
  const dir = await scratchDir(t, 'runlog-closed-');
  const singleReads = { count: 0 };
  const file = await openFileLog({ dir, partitions: 2 });
  const log: EventLog = wrapLog(file, {
    kind,
    read: (partition: number, from: bigint, options?: ReadOptions) => {
      if (options?.maxRecords === 1) singleReads.count++;
      return file.read(partition, from, options);
    },
  });
  const queue = await openRunQueueOnLog(log, { clock: clock.read, closedCacheBytes });
  onCleanup(t, () => queue.stop());
  return { queue, ids: [], submitted: [], runIds: [], singleReads };
}

/** Runs `op` on `s`; answers what it answered, or its refusal, with ids written #n. */
async function apply(s: Subject, op: Op, runCounter: { n: number }): Promise<unknown> {
  const answer = await answerOf(s, op, runCounter).then(
    (value) => ({ value }),
    (error: { code?: string; message?: string }) => ({ error: error.code ?? String(error), message: error.message }),
  );
  let text = JSON.stringify(answer, (_, value: unknown) => (value instanceof Uint8Array ? Buffer.from(value).toString() : value));
  s.ids.forEach((id, n) => (text = text.replaceAll(id, `#${n}`)));
  return JSON.parse(text);
}

/** Notes the entry `ticket` created (each queue draws its own ids: answers name entries by their index, #n). */
function issued(s: Subject, fields: Subject['submitted'][number], ticket: Ticket): Ticket {
  if (ticket.created) {
    s.ids.push(ticket.entryId);
    s.submitted.push(fields);
    s.runIds.push([]);
  }
  return ticket;
}

async function answerOf(s: Subject, op: Op, runCounter: { n: number }): Promise<unknown> {
  const { queue } = s;
  const known = (n: number): number | null => (s.ids.length === 0 ? null : n % s.ids.length);
  switch (op.kind) {
    case 'submit': {
      const fields = {
        tenant: TENANTS[op.tenant]!,
        thread: `t${op.thread}`,
        key: op.key === null ? null : `k${op.key}`,
        input: `in-${op.input}`,
      };
      return issued(
        s,
        fields,
        await queue.submit(submitOf(fields.tenant, fields.thread, { input: fields.input, ...(fields.key ? { key: fields.key } : {}) })),
      );
    }
    case 'finish': {
      const n = known(op.entry);
      if (n === null) return null;
      const { tenant } = s.submitted[n]!;
      for (let attempt = 0; ; attempt++) {
        const taken = await queue.takeEntry(tenant, s.ids[n]!, { holder: 'w', ttlMs: 60_000 });
        if (taken === null) return 'not takeable';
        const runId = `run-${runCounter.n++}`;
        s.runIds[n]!.push(runId);
        await queue.startAttempt(taken.lease, runId);
        if (attempt < op.retries) await queue.yield(taken.lease, op.defer ? { kind: 'defer' } : { kind: 'retry', error: 'again' });
        else
          return queue.close(taken.lease, {
            status: op.outcome,
            result: `out-${n}`,
            ...(op.outcome === 'failed' ? { error: 'boom' } : {}),
          });
      }
    }
    case 'cancel': {
      const n = known(op.entry);
      return n === null ? null : queue.cancel(s.submitted[n]!.tenant, s.ids[n]!, 'no longer');
    }
    case 'read': {
      const n = known(op.entry);
      if (n === null) return null;
      const tenant = s.submitted[n]!.tenant;
      return queue.entry(op.asOther ? TENANTS.find((other) => other !== tenant)! : tenant, s.ids[n]!);
    }
    case 'await': {
      const n = known(op.entry);
      return n === null ? null : queue.awaitClosed(s.submitted[n]!.tenant, s.ids[n]!, { timeoutMs: 0 });
    }
    case 'resubmit': {
      const n = known(op.entry);
      if (n === null || s.submitted[n]!.key === null) return null;
      const { tenant, thread, key, input } = s.submitted[n]!;
      const fields = { tenant, thread, key, input: op.same ? input : `${input}-other` };
      // Once its entry is pruned the key is free: a new entry, known by its index like a submit's.
      return issued(s, fields, await queue.submit(submitOf(tenant, thread, { key, input: fields.input })));
    }
    case 'reuseRunId': {
      const [n, of] = [known(op.entry), known(op.of)];
      const used = of === null ? undefined : s.runIds[of]!.at(-1);
      if (n === null || used === undefined) return null;
      const taken = await queue.takeEntry(s.submitted[n]!.tenant, s.ids[n]!, { holder: 'w', ttlMs: 60_000 });
      if (taken === null) return 'not takeable';
      const attempt = await queue.startAttempt(taken.lease, used).catch((error: { code: string }) => error.code);
      if (typeof attempt !== 'string') s.runIds[n]!.push(used);
      await queue.yield(taken.lease, { kind: 'defer' });
      return attempt;
    }
    case 'prune':
      return queue.prune(op.ageMs, 1_000);
    case 'tick':
      return null;
  }
}

describe('closed entries: the ticket index, the cache and reading back from the log', () => {
  for (const tinyBytes of TINY) {
    it(`random work and random reads answer the same with a cache of ${tinyBytes} bytes as with a huge one (property, file log)`, async (t) => {
      let misses = 0;
      await fc.assert(
        fc.asyncProperty(fc.array(op, { minLength: 10, maxLength: 70 }), async (ops) => {
          const clock = new FakeClock();
          const [tiny, huge] = [await subject(t, clock, tinyBytes), await subject(t, clock, HUGE)];
          const [tinyRuns, hugeRuns] = [{ n: 0 }, { n: 0 }];
          try {
            for (const step of ops) {
              if (step.kind === 'tick') clock.advance(step.ms);
              const [a, b] = [await apply(tiny, step, tinyRuns), await apply(huge, step, hugeRuns)];
              assert.deepEqual(a, b, `after ${JSON.stringify(step)}`);
            }
            misses += tiny.singleReads.count;
          } finally {
            await Promise.all([tiny.queue.stop(), huge.queue.stop()]);
          }
        }),
        { numRuns: 20, includeErrorInReport: true },
      );
      assert.ok(misses > 0, 'the tiny cache read closed entries back from the log');
    });
  }

  it('on the file log closes are not cached: the first entry() of a closed entry reads it back, the next is a hit; where a read-back is a fetch (Kafka) closes are cached', async (t) => {
    for (const kind of ['file', 'kafka']) {
      const s = await subject(t, new FakeClock(), HUGE, kind);
      const ticket = await s.queue.submit(submitOf('acme', 'a'));
      const taken = await s.queue.take({ agents: ['build'], holder: 'w', ttlMs: 60_000 });
      const closed = await s.queue.close(taken!.lease, { status: 'succeeded' });
      const reads = [s.singleReads.count];
      const first = await s.queue.entry('acme', ticket.entryId);
      reads.push(s.singleReads.count);
      const second = await s.queue.entry('acme', ticket.entryId);
      reads.push(s.singleReads.count);
      assert.deepEqual(first, closed, `${kind}: the entry read back is the one close answered`);
      assert.deepEqual(second, closed);
      const [readBack, again] = [reads[1]! - reads[0]!, reads[2]! - reads[1]!];
      if (kind === 'file')
        assert.equal(readBack, 2, 'file: the first entry() read its 2 records back (its Submitted and its close; it made no attempt)');
      else assert.equal(readBack, 0, 'kafka: the close was cached');
      assert.equal(again, 0, `${kind}: the second entry() was a hit`);
      await s.queue.stop();
    }
  });

  it('a closed entry keeps its key and run ids until pruned; then it reads TicketExpired, after a restart and a compaction too', async (t) => {
    const dir = await scratchDir(t, 'runlog-closed-');
    await closedEntryLifecycle(t, () => openFileLog({ dir, partitions: 1 }));
  });
});
