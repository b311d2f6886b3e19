/**
 * TicketIndex.freeze (projections/ticket-index.ts): the frozen copy a snapshot reads over
 * several turns shares the index's chunks and maps while the index goes on taking closes,
 * settles and prunes. Two things must hold whatever those are:
 *   - the copy reads exactly what the index held when it was frozen (its toColumns then);
 *   - once released, the index answers exactly like a twin given the same operations and
 *     never frozen (lookups, records, deferred attempts, columns).
 * The operations are random (fast-check seeds): tenants past 256 and 65,536 (widened chunks),
 * keyed and unkeyed, 0..3 attempts, deferred attempts, seqs and offsets whose differences do
 * not fit 32 bits (the wide maps), close times stepping back (late rows), rows spanning
 * several 65,536-row chunks, pruned oldest first or one by one (tombstones), whole chunks dropped.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { CHUNK } from '../../projections/chunked-column.ts';
import { TicketIndex, type TicketRecords } from '../../projections/ticket-index.ts';
import { Closes, randomFrom, type CloseShape } from '../support/ticket-closes.ts';

/** The index and its never-frozen twin, given the same operations; unsettled rows waiting for their records. */
class Twins {
  live = new TicketIndex();
  twin = new TicketIndex();
  readonly pending: { row: number; records: TicketRecords }[] = [];
  /** Rows added, in order (some removed since). */
  rows = 0;

  constructor(readonly closes: Closes) {}

  add(settled: boolean): void {
    const { ticket, records } = this.closes.next();
    const row = this.live.add(ticket, settled ? records : null);
    assert.equal(this.twin.add(ticket, settled ? records : null), row);
    if (!settled) this.pending.push({ row, records });
    this.rows++;
  }

  settleOne(): void {
    const at = Math.floor(this.closes.random() * this.pending.length);
    const [settling] = this.pending.splice(at, 1);
    if (settling === undefined) return;
    this.live.settle(settling.row, settling.records);
    this.twin.settle(settling.row, settling.records);
  }

  /** Both indexes replaced by ones loaded from the columns (a queue opened from a snapshot): rows renumbered from 0. */
  reload(): void {
    this.settleAll();
    const columns = this.live.toColumns();
    [this.live, this.twin] = [TicketIndex.fromColumns(columns), TicketIndex.fromColumns(columns)];
    this.rows = this.live.size;
  }

  settleAll(): void {
    while (this.pending.length > 0) this.settleOne();
  }

  /** Retention: the `count` oldest closes go. */
  prune(count: number): void {
    const rows = this.live.oldest(count, () => true);
    assert.deepEqual(
      this.twin.oldest(count, () => true),
      rows,
    );
    for (const row of rows) this.remove(row);
  }

  /** One row goes, wherever it is (a tombstone, a prune listing it). */
  removeAny(): void {
    const row = Math.floor(this.closes.random() * this.rows);
    this.remove(row);
  }

  remove(row: number): void {
    this.live.remove(row);
    this.twin.remove(row);
    const at = this.pending.findIndex((p) => p.row === row);
    if (at >= 0) this.pending.splice(at, 1);
  }

  /** One random operation of the kinds a partition's fold makes. */
  step(): void {
    const r = this.closes.random();
    if (r < 0.45) this.add(true);
    else if (r < 0.6) this.add(false);
    else if (r < 0.75) this.settleOne();
    else if (r < 0.9) this.prune(1 + Math.floor(this.closes.random() * 40));
    else this.removeAny();
  }
}

/** Everything the index answers: the twin must answer the same. */
function assertSameAnswers(live: TicketIndex, twin: TicketIndex, twins: Twins, why: string): void {
  const { closes } = twins;
  assert.equal(live.size, twin.size, `${why}: size`);
  assert.equal(live.attemptCount, twin.attemptCount, `${why}: attemptCount`);
  assert.equal(live.unsettled, twin.unsettled, `${why}: unsettled`);
  for (const seq of closes.seqs) {
    const row = live.rowOf(seq);
    assert.equal(row, twin.rowOf(seq), `${why}: rowOf(${seq})`);
    if (row < 0) continue;
    assert.deepEqual(live.recordsOf(row), twin.recordsOf(row), `${why}: recordsOf(${row})`);
    assert.equal(live.deferredAttemptsOf(row), twin.deferredAttemptsOf(row), `${why}: deferredAttemptsOf(${row})`);
    assert.deepEqual(
      [live.tenantOf(row), live.outcomeOf(row), live.closedAtOf(row), live.runHashesOf(row)],
      [twin.tenantOf(row), twin.outcomeOf(row), twin.closedAtOf(row), twin.runHashesOf(row)],
      `${why}: row ${row}`,
    );
  }
  const sorted = (rows: number[]): number[] => rows.sort((a, b) => a - b);
  for (const hash of closes.keyHashes) assert.deepEqual(sorted(live.rowsByKey(hash)), sorted(twin.rowsByKey(hash)), `${why}: rowsByKey`);
  for (const hash of closes.runHashes) assert.deepEqual(sorted(live.rowsByRun(hash)), sorted(twin.rowsByRun(hash)), `${why}: rowsByRun`);
  const pruneOrder = live.oldest(Number.POSITIVE_INFINITY, () => true);
  assert.deepEqual(
    pruneOrder,
    twin.oldest(Number.POSITIVE_INFINITY, () => true),
    why,
  );
  const closeTimes = pruneOrder.map((row) => live.closedAtOf(row));
  assert.ok(
    closeTimes.every((at, k) => k === 0 || closeTimes[k - 1]! <= at),
    `${why}: prune order by close time`,
  );
  if (live.unsettled === 0) assert.deepEqual(live.toColumns(), twin.toColumns(), `${why}: toColumns`);
}

interface FreezeRun {
  seed: number;
  shape: CloseShape;
  /** Closes before the freeze (some pruned or removed as they come). */
  before: number;
  /** Random operations while the copy is out, and after its release. */
  during: number;
  after: number;
  /** Rows pruned oldest first while the copy is out, at once (whole chunks dropped when large). */
  pruneDuring?: number;
  /** The index frozen is one loaded from columns (fromColumns: its chunks made whole, at the width they need). */
  loaded?: boolean;
}

/** Builds, freezes, mutates: the copy reads what was frozen; released, the index answers as its twin. */
function freezeRun(run: FreezeRun): void {
  const twins = new Twins(new Closes(randomFrom(run.seed), run.shape));
  for (let n = 0; n < run.before; n++) {
    if (twins.closes.random() < 0.9) twins.add(true);
    else twins.step();
  }
  twins.settleAll();
  if (run.loaded === true) twins.reload();
  const atFreeze = twins.live.toColumns();
  const frozen = twins.live.freeze();
  const checkCopy = (why: string): void => assert.deepEqual(frozen.index.toColumns(), atFreeze, `the frozen copy, ${why}`);
  checkCopy('as frozen');
  for (let n = 0; n < run.during; n++) {
    twins.step();
    if (n === run.during >> 1 && run.pruneDuring !== undefined) twins.prune(run.pruneDuring);
    if (n % 1_000 === 999) checkCopy(`after ${n + 1} operations`);
  }
  if (run.pruneDuring !== undefined) twins.prune(run.pruneDuring);
  checkCopy(`after ${run.during} operations`);
  assertSameAnswers(twins.live, twins.twin, twins, 'while frozen');
  frozen.release();
  frozen.release();
  assertSameAnswers(twins.live, twins.twin, twins, 'just released');
  for (let n = 0; n < run.after; n++) twins.step();
  twins.settleAll();
  assertSameAnswers(twins.live, twins.twin, twins, 'released, then more operations');
  // A second freeze after the first's release works as the first.
  const again = twins.live.toColumns();
  const second = twins.live.freeze();
  frozen.release(); // the first copy's release again: leaves the second alone
  for (let n = 0; n < 200; n++) twins.step();
  twins.prune(twins.live.size);
  assert.deepEqual(second.index.toColumns(), again, 'the second frozen copy');
  second.release();
  assertSameAnswers(twins.live, twins.twin, twins, 'second release');
}

const shapes = fc.record({
  tenants: fc.constantFrom(3, 300, 70_000),
  far: fc.constantFrom(0, 0.02, 0.3),
  late: fc.constantFrom(0, 0.05, 0.4),
  maxAttempts: fc.integer({ min: 0, max: 3 }),
});

describe('TicketIndex.freeze', () => {
  it('the copy reads what was frozen; released, the index answers as one never frozen (random operations)', () => {
    fc.assert(
      fc.property(
        fc.integer(),
        shapes,
        fc.integer({ min: 0, max: 3_000 }),
        fc.integer({ min: 0, max: 3_000 }),
        fc.boolean(),
        (seed, shape, before, during, loaded) => freezeRun({ seed, shape, before, during, after: 500, loaded }),
      ),
      { numRuns: 40 },
    );
  });

  // Large runs: several chunks, chunks dropped while the copy is out, tenant chunks widened past 256 and 65,536.
  const large: { name: string; run: FreezeRun }[] = [
    {
      name: 'three chunks of rows, the first two pruned whole while frozen, late rows and wide values',
      run: {
        seed: 1,
        shape: { tenants: 300, far: 0.01, late: 0.02, maxAttempts: 2 },
        before: 3 * CHUNK - 1000,
        during: 4_000,
        after: 2_000,
        pruneDuring: 2 * CHUNK,
      },
    },
    {
      name: 'a new tenant every close: tenant chunks widened to 2 then 4 bytes while frozen',
      run: { seed: 2, shape: { tenants: Infinity, far: 0, late: 0, maxAttempts: 1 }, before: 200, during: 120_000, after: 1_000 },
    },
    {
      name: 'past 65,536 tenants before freezing, then pruned to nothing and refilled while frozen',
      run: {
        seed: 3,
        shape: { tenants: Infinity, far: 0.05, late: 0.1, maxAttempts: 3 },
        before: CHUNK + 5_000,
        during: 20_000,
        after: 2_000,
        pruneDuring: CHUNK + 30_000,
      },
    },
    {
      name: 'loaded from columns (a queue opened from a snapshot) of two chunks, the first pruned whole while frozen',
      run: {
        seed: 4,
        shape: { tenants: 70_000, far: 0.02, late: 0.05, maxAttempts: 3 },
        before: CHUNK + 20_000,
        during: 10_000,
        after: 2_000,
        pruneDuring: CHUNK,
        loaded: true,
      },
    },
  ];
  for (const { name, run } of large) it(name, () => freezeRun(run));

  it('refuses a second copy before the first is released, and a copy while a close is unsettled', () => {
    const closes = new Closes(randomFrom(7), { tenants: 3, far: 0, late: 0, maxAttempts: 1 });
    const index = new TicketIndex();
    for (let n = 0; n < 10; n++) {
      const { ticket, records } = closes.next();
      index.add(ticket, records);
    }
    const frozen = index.freeze();
    assert.throws(() => index.freeze(), /frozen copy out already/);
    frozen.release();
    frozen.release();
    index.freeze().release();
    const { ticket, records } = closes.next();
    const row = index.add(ticket, null);
    assert.throws(() => index.freeze(), /1 closes whose records are not durable yet/);
    index.settle(row, records);
    index.freeze().release();
  });
});
