/**
 * The soak's checker (bench/cluster/check.ts) on made-up logs: a clean one counts nothing,
 * and each fault it looks for, planted alone, is counted once. So the soak's zeros are
 * measured, not a check that cannot fail.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { check, MUST_BE_ZERO, type SoakCounts } from '../../bench/cluster/check.ts';
import type { Acknowledged } from '../../bench/cluster/submitter.ts';
import type { HandlerRun } from '../../bench/cluster/worker-child.ts';
import type { RunlogEvent } from '../../src/events/types.ts';
import { submittedEvent } from '../../bench/submitted-event.ts';

const TENANT = 'soak';

function submitted(entryId: string, thread: string, n: number): RunlogEvent {
  return submittedEvent({ tenant: TENANT, thread, entryId, at: n, seq: n + 1 }, { agent: 'soak', key: `e${n}` });
}

const ids = (entryId: string, thread: string) => ({ tenant: TENANT, thread, entryId, at: 100 });
const leased = (entryId: string, thread: string, epoch: number): RunlogEvent => ({
  type: 'Leased',
  ...ids(entryId, thread),
  holder: 'w',
  epoch,
  expiresAt: 1_000,
  deferredAttempts: 0,
});
const started = (entryId: string, thread: string, attempt: number): RunlogEvent => ({
  type: 'AttemptStarted',
  ...ids(entryId, thread),
  runId: `r-${entryId}-${attempt}`,
  attempt,
  epoch: attempt,
});
const retried = (entryId: string, thread: string): RunlogEvent => ({
  type: 'Yielded',
  ...ids(entryId, thread),
  epoch: 1,
  kind: 'retry',
  error: 'planned',
  notBefore: null,
  deferredAttempts: 0,
});
const closed = (entryId: string, thread: string): RunlogEvent => ({
  type: 'Closed',
  ...ids(entryId, thread),
  outcome: 'succeeded',
  result: null,
  error: null,
  deferredAttempts: 0,
});

/** Thread t0: entries a (e0) then b (e2); thread t1: entry c (e1). a fails once and is retried; c's first lease expires. */
function cleanLog(): RunlogEvent[] {
  return [
    submitted('a', 't0', 0),
    submitted('c', 't1', 1),
    submitted('b', 't0', 2),
    leased('a', 't0', 1),
    started('a', 't0', 1),
    retried('a', 't0'),
    leased('c', 't1', 1),
    started('c', 't1', 1),
    leased('c', 't1', 2),
    started('c', 't1', 2),
    leased('a', 't0', 2),
    started('a', 't0', 2),
    closed('a', 't0'),
    closed('c', 't1'),
    leased('b', 't0', 1),
    started('b', 't0', 1),
    closed('b', 't0'),
  ];
}

const acknowledged: Acknowledged[] = [
  { n: 0, thread: 't0', index: 0, entryId: 'a' },
  { n: 1, thread: 't1', index: 0, entryId: 'c' },
  { n: 2, thread: 't0', index: 1, entryId: 'b' },
];

const cleanRuns: HandlerRun[] = [
  ['a', 't0', 1, 10, 20, 1, 7],
  ['c', 't1', 1, 12, 30, 0, 7],
  ['c', 't1', 2, 40, 50, 0, 8],
  ['a', 't0', 2, 25, 35, 0, 8],
  ['b', 't0', 1, 36, 45, 0, 7],
];

function faults(counts: SoakCounts): Partial<SoakCounts> {
  return Object.fromEntries(MUST_BE_ZERO.filter((name) => counts[name] !== 0).map((name) => [name, counts[name]]));
}

describe('the soak checker', () => {
  it('counts nothing on a clean run, and counts what happened', () => {
    const counts = check([cleanLog()], acknowledged, cleanRuns);
    assert.deepEqual(faults(counts), {});
    assert.deepEqual(
      [counts.attempts, counts.retried, counts.leaseExpiries, counts.succeeded, counts.handlerRuns, counts.handlerFailures],
      [5, 1, 1, 3, 5, 1],
    );
  });

  const cases: [string, RunlogEvent[], Acknowledged[], HandlerRun[], Partial<SoakCounts>][] = [
    [
      'an acknowledged entry missing from the log',
      cleanLog(),
      [...acknowledged, { n: 3, thread: 't1', index: 1, entryId: 'd' }],
      cleanRuns,
      { lost: 1, notClosed: 1 },
    ],
    [
      'a key submitted as two entries',
      [...cleanLog(), submitted('x', 't2', 0)],
      acknowledged,
      cleanRuns,
      { duplicateSubmits: 1, submitOrderBroken: 0 },
    ],
    [
      'an entry never closed',
      cleanLog().filter((e) => !(e.type === 'Closed' && e.entryId === 'b')),
      acknowledged,
      cleanRuns,
      { notClosed: 1 },
    ],
    ['an entry closed twice', [...cleanLog(), closed('b', 't0')], acknowledged, cleanRuns, { closedTwice: 1 }],
    [
      'a thread attempt starting while another is open',
      cleanLog().filter((e) => e.type !== 'Yielded' && !(e.type === 'Leased' && e.entryId === 'a' && e.epoch === 2)),
      acknowledged,
      cleanRuns,
      { eventOverlaps: 1 },
    ],
    [
      'a handler run starting before the thread’s previous one ended',
      cleanLog(),
      acknowledged,
      cleanRuns.map((r) => (r[0] === 'b' ? ['b', 't0', 1, 30, 45, 0, 7] : r)),
      { handlerOverlaps: 1 },
    ],
    [
      'an entry started before its thread’s older one closed',
      [
        submitted('a', 't0', 0),
        submitted('b', 't0', 2),
        leased('b', 't0', 1),
        started('b', 't0', 1),
        closed('b', 't0'),
        leased('a', 't0', 1),
        started('a', 't0', 1),
        closed('a', 't0'),
      ],
      acknowledged.filter((a) => a.thread === 't0'),
      [],
      { startsOffHead: 1 },
    ],
    [
      'a thread’s entries logged out of submission order',
      [
        submitted('b', 't0', 2),
        submitted('a', 't0', 0),
        leased('b', 't0', 1),
        started('b', 't0', 1),
        closed('b', 't0'),
        leased('a', 't0', 1),
        started('a', 't0', 1),
        closed('a', 't0'),
      ],
      acknowledged.filter((a) => a.thread === 't0'),
      [],
      { submitOrderBroken: 1 },
    ],
    [
      'handler runs of a thread out of submission order',
      cleanLog(),
      acknowledged,
      cleanRuns.map((r) => (r[0] === 'b' ? ['b', 't0', 1, 5, 8, 0, 7] : r)),
      { handlerOrderBroken: 2 },
    ],
    [
      'a handler run of an attempt never started',
      cleanLog(),
      acknowledged,
      [...cleanRuns, ['b', 't0', 2, 60, 61, 0, 7]],
      { runsWithoutAttempt: 1 },
    ],
  ];
  for (const [name, events, acks, runs, expected] of cases) {
    it(`counts ${name}`, () => {
      const examples: string[] = [];
      const counts = check([events], acks, runs, examples);
      const found = faults(counts);
      if (found.eventOverlaps || found.handlerOverlaps || found.startsOffHead) assert.ok(examples.length > 0, 'the fault is described');
      assert.deepEqual(found, Object.fromEntries(Object.entries(expected).filter(([, n]) => n !== 0)));
    });
  }
});
