/**
 * The ticket index's columns written into an encoded snapshot state a stretch of rows at a
 * time (projections/ticket-columns-writer.ts, as src/projector/snapshots.ts saveSnapshot
 * drives it): the state decodes to the index as it was when the snapshot was taken, however
 * the index changed between stretches (closes unsettled then settled, prunes, tombstones), for
 * rows spanning several stretches and stretches of more than 8,192 attempts, late rows, wide
 * values and many tenants; when no tenant was pruned and no row is late, the bytes are the
 * bytes the one-turn path (viewStateToWrite) writes. When the compiled writer declines the
 * state, avsc takes the columns whole and they decode the same.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { decodeSnapshotState, encodeSnapshotState } from '../../src/events/snapshot-codec.ts';
import { PartitionView } from '../../projections/partition-view.ts';
import { storedColumns } from '../../projections/snapshot-columns.ts';
import { ClosedColumnsWriting, STRETCH } from '../../projections/ticket-columns-writer.ts';
import { TicketIndex, type TicketIndexColumns, type TicketRecords } from '../../projections/ticket-index.ts';
import { restoreView, viewState, viewStateToWrite, viewStateToWriteInStretches } from '../../projections/view-snapshot.ts';
import { Closes, randomFrom, type CloseShape } from '../support/ticket-closes.ts';

/** Past every offset the closes make (at most a few thousand jumps of 2^33). */
const NEXT_OFFSET = 2n ** 52n;

/** A view whose closed tickets are `closes` (some pruned as they come, when `prune`). */
function viewOf(closes: Closes, count: number, prune: boolean): PartitionView {
  const view = new PartitionView(0);
  const index = view.closed.index;
  for (let n = 0; n < count; n++) {
    const { ticket, records } = closes.next();
    index.add(ticket, records);
    if (prune && closes.random() < 0.1) index.remove(index.oldest(1, () => true)[0]!);
  }
  return view;
}

/** How the index changes between stretches, as a partition's fold changes it while a snapshot is written. */
class Meanwhile {
  readonly #pending: { row: number; records: TicketRecords }[] = [];

  constructor(
    readonly index: TicketIndex,
    readonly closes: Closes,
  ) {}

  /** `operations` random closes (settled or not), settles, prunes and tombstones. */
  run(operations: number): void {
    const { index, closes } = this;
    for (let n = 0; n < operations; n++) {
      const r = closes.random();
      if (r < 0.5) {
        const { ticket, records } = closes.next();
        const settled = r < 0.3;
        const row = index.add(ticket, settled ? records : null);
        if (!settled) this.#pending.push({ row, records });
      } else if (r < 0.7) {
        const settling = this.#pending.shift();
        if (settling !== undefined) index.settle(settling.row, settling.records);
      } else if (r < 0.95) {
        for (const row of index.oldest(1 + Math.floor(closes.random() * 2 * STRETCH), () => true)) index.remove(row);
      } else {
        // A tombstone: out of prune order.
        index.remove(index.oldest(1 + Math.floor(closes.random() * 100), () => true).pop() ?? -1);
      }
    }
  }
}

/** What a restore of `state` makes of the closed tickets (restoreView, as a queue opening from the snapshot). */
function restoredColumns(state: Uint8Array): TicketIndexColumns {
  return restoreView(0, decodeSnapshotState(state), NEXT_OFFSET).closed.index.toColumns();
}

/** The state encoded the sliced way, `meanwhile` run between stretches; answers it and how many stretches it took. */
function encodeInStretches(view: PartitionView, meanwhile: () => void): { state: Uint8Array; stretches: number } {
  const { state: toWrite, threads, columns } = viewStateToWriteInStretches(view);
  try {
    while (threads.writeStretch()); // no open entry changes here
    const state = encodeSnapshotState(toWrite);
    let stretches = 0;
    for (; columns.writeStretch(); stretches++) meanwhile();
    assert.equal(columns.writeStretch(), false, 'a stretch once every row is written');
    return { state, stretches };
  } finally {
    threads.release();
    columns.release();
  }
}

interface Case {
  name: string;
  seed: number;
  shape: CloseShape;
  rows: number;
  /** Closes pruned as they come before the snapshot (tenants no retained row names). */
  prune: boolean;
  /** Operations between two stretches. */
  between: number;
}

const cases: Case[] = [
  { name: 'no closed ticket', seed: 1, shape: { tenants: 3, far: 0, late: 0, maxAttempts: 1 }, rows: 0, prune: false, between: 10 },
  { name: 'one stretch', seed: 2, shape: { tenants: 3, far: 0, late: 0, maxAttempts: 1 }, rows: 100, prune: false, between: 10 },
  {
    name: 'exactly one stretch of rows',
    seed: 3,
    shape: { tenants: 30, far: 0, late: 0, maxAttempts: 0 },
    rows: STRETCH,
    prune: false,
    between: 10,
  },
  {
    name: 'several stretches of more than 8,192 attempts each (the scratch grows), prunes and closes between them',
    seed: 4,
    shape: { tenants: 300, far: 0, late: 0, maxAttempts: 3 },
    rows: 5 * STRETCH + 17,
    prune: true,
    between: 3_000,
  },
  {
    name: 'late rows and wide values, the index pruned down to nothing meanwhile',
    seed: 5,
    shape: { tenants: 40, far: 0.05, late: 0.2, maxAttempts: 2 },
    rows: 3 * STRETCH,
    prune: true,
    between: 20_000,
  },
  {
    name: 'past 65,536 tenants, rows spanning two chunks',
    seed: 6,
    shape: { tenants: Infinity, far: 0.01, late: 0.01, maxAttempts: 2 },
    rows: 70_000,
    prune: true,
    between: 2_000,
  },
];

/** A view of `c`'s closes snapshotted in stretches, the index changed between them: the state restores to the index at capture. */
function decodesAsCaptured(c: Omit<Case, 'name'>): void {
  const closes = new Closes(randomFrom(c.seed), c.shape);
  const view = viewOf(closes, c.rows, c.prune);
  const atCapture = view.closed.index.toColumns();
  const meanwhile = new Meanwhile(view.closed.index, closes);
  const { state, stretches } = encodeInStretches(view, () => meanwhile.run(c.between));
  assert.equal(stretches, Math.ceil(atCapture.seq.length / STRETCH));
  assert.deepEqual(restoredColumns(state), atCapture);
}

describe('ClosedColumnsWriting', () => {
  for (const c of cases) it(`${c.name}: the state decodes to the index as it was when taken`, () => decodesAsCaptured(c));

  it('random closes, shapes and changes between stretches: the state decodes to the index as it was when taken', () => {
    const shapes = fc.record({
      tenants: fc.constantFrom(3, 300, Infinity),
      far: fc.constantFrom(0, 0.02, 0.3),
      late: fc.constantFrom(0, 0.05, 0.4),
      maxAttempts: fc.integer({ min: 0, max: 4 }),
    });
    fc.assert(
      fc.property(
        fc.record({
          seed: fc.integer(),
          shape: shapes,
          rows: fc.integer({ min: 0, max: 3 * STRETCH }),
          prune: fc.boolean(),
          between: fc.integer({ min: 0, max: 2 * STRETCH }),
        }),
        decodesAsCaptured,
      ),
      { numRuns: 15 },
    );
  });

  it('with no tenant pruned and no late row, the bytes are those the one-turn path writes', () => {
    for (const [seed, rows] of [
      [7, 0],
      [8, 3 * STRETCH + 5],
    ] as const) {
      const view = viewOf(new Closes(randomFrom(seed), { tenants: 500, far: 0.02, late: 0, maxAttempts: 3 }), rows, false);
      const whole = encodeSnapshotState(viewStateToWrite(view));
      const { state } = encodeInStretches(view, () => {});
      assert.ok(Buffer.from(state).equals(Buffer.from(whole)), `${rows} rows`);
    }
  });

  it('when the compiled writer declines the state, avsc takes the columns whole: they decode the same', () => {
    const closes = new Closes(randomFrom(9), { tenants: 300, far: 0.05, late: 0.1, maxAttempts: 3 });
    const view = viewOf(closes, 2 * STRETCH + 11, true);
    const atCapture = view.closed.index.toColumns();
    const { state: toWrite, threads, columns } = viewStateToWriteInStretches(view);
    try {
      // A string that is not well-formed UTF-16 after the columns: the compiled writer declines it (body-writer.ts), avsc writes it.
      toWrite.submissionKeys = [{ id: 'key-\ud800', entryId: 'entry' }];
      while (threads.writeStretch());
      const state = encodeSnapshotState(toWrite);
      assert.equal(columns.writeStretch(), false, 'nothing left to fill');
      new Meanwhile(view.closed.index, closes).run(5_000);
      const decoded = decodeSnapshotState(state);
      assert.equal(decoded.submissionKeys.length, 1);
      assert.deepEqual(TicketIndex.fromColumns(storedColumns(decoded.closedIndex)).toColumns(), atCapture);
    } finally {
      threads.release();
      columns.release();
    }
  });

  it('names only the tenants some retained row names: a tenant whose rows were all pruned is gone after a restore', () => {
    // 20,000 tenants churned (one close each, all but the last 3 pruned), also after a restore from columns.
    const closes = new Closes(randomFrom(11), { tenants: Infinity, far: 0, late: 0, maxAttempts: 1 });
    const view = viewOf(closes, 20_000, false);
    for (const row of view.closed.index.oldest(19_997, () => true)) view.closed.index.remove(row);
    const kept = view.closed.index.toColumns().tenants;
    assert.equal(kept.length, 3);
    for (const restored of [view, restoreView(0, viewState(view), NEXT_OFFSET)]) {
      assert.equal(restored.closed.index.tenants.length, restored === view ? 20_000 : 3);
      const { state } = encodeInStretches(restored, () => {});
      const decoded = decodeSnapshotState(state).closedIndex.find((column) => column.name === 'tenants:strings');
      assert.deepEqual(decoded?.strings, kept);
      assert.ok(state.byteLength < 2_000, `a state of ${state.byteLength} bytes for 3 closed tickets`);
      assert.deepEqual(restoreView(0, decodeSnapshotState(state), NEXT_OFFSET).closed.index.tenants, kept);
    }
  });

  it('a tenant name the compiled writer declines (not well-formed UTF-16): avsc takes the columns whole', () => {
    const view = viewOf(new Closes(randomFrom(12), { tenants: 3, far: 0, late: 0, maxAttempts: 1 }), 20, false);
    view.closed.index.add(
      { seq: 1_000_000, tenant: 'lone \ud800', outcome: 'succeeded', closedAt: 2e12, keyHash: null, runHashes: [], deferredAttempts: 0 },
      { submittedOffset: 1_000_000, closeOffset: 1_000_001, attemptOffsets: [] },
    );
    const { state, stretches } = encodeInStretches(view, () => {});
    assert.equal(stretches, 0, 'nothing left to write: avsc wrote the columns');
    assert.ok(state.byteLength < 64 << 10, `a state of ${state.byteLength} bytes`);
    assert.equal(restoreView(0, decodeSnapshotState(state), NEXT_OFFSET).closed.size, 21);
  });

  it('writes nothing before the state is placed, and nothing after avsc took the columns', () => {
    const view = viewOf(new Closes(randomFrom(10), { tenants: 3, far: 0, late: 0, maxAttempts: 1 }), 50, false);
    const before = new ClosedColumnsWriting(view.closed.index);
    try {
      assert.equal(before.writeStretch(), false);
    } finally {
      before.release();
    }
    const taken = new ClosedColumnsWriting(view.closed.index);
    try {
      const encoded = new Uint8Array(64 << 10);
      assert.equal(taken.writeAvro(Buffer.from(encoded.buffer), 0) > 0, true);
      taken.values();
      taken.placed(encoded, 0);
      const copy = encoded.slice();
      assert.equal(taken.writeStretch(), false);
      assert.ok(Buffer.from(encoded).equals(Buffer.from(copy)), 'nothing written');
    } finally {
      taken.release();
    }
  });
});
