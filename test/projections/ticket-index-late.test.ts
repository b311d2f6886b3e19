/**
 * Late rows after a row removed out of prune order (a tombstone of its entry, a prune listing
 * it out of order). A late row (its close time before one already folded) goes into the index's
 * #late list, kept by close time (ticket-index.ts #insertLate); a row removed out of prune order
 * stays in that list until it reaches the front. Found 2026-12-06 (from before commit 01dc503):
 * the insertion read the close times of such rows as it walked the list back, so
 *   - when the removed row's close time was kept whole (a difference past 2^31 from its block's
 *     base: delta-column.ts), forgotten at removal, the walk stopped there and the new row landed
 *     after live rows that closed later: prune order not by close time, and a snapshot of the
 *     index refused at restore ("closedAt[1] is before closedAt[0]": RowChecks);
 *   - once the removed row's chunk was dropped, reading it threw a TypeError: the close could
 *     not be folded at all.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CHUNK } from '../../projections/chunked-column.ts';
import { TicketIndex } from '../../projections/ticket-index.ts';

/** Adds a close at `closedAt` (seqs and offsets one after another, no attempt); answers its row. */
function closer(index: TicketIndex): (closedAt: number) => number {
  let seq = 0;
  return (closedAt) => {
    seq++;
    const records = { submittedOffset: 3 * seq, attemptOffsets: [], closeOffset: 3 * seq + 1 };
    return index.add({ seq, tenant: 't', outcome: 'succeeded', closedAt, keyHash: null, runHashes: [], deferredAttempts: 0 }, records);
  };
}

function closeTimesInPruneOrder(index: TicketIndex): number[] {
  return index.oldest(Number.POSITIVE_INFINITY, () => true).map((row) => index.closedAtOf(row));
}

describe('TicketIndex late rows after a row removed out of prune order', () => {
  it('a late row is put in prune order past a removed row whose close time was kept whole, and a snapshot of the index restores', () => {
    const index = new TicketIndex();
    const add = closer(index);
    add(1e13); // the latest close time so far: the rows after are late
    add(100);
    const removed = add(5e12); // more than 2^31 ms before its block's base: kept whole
    add(8e12);
    index.remove(removed); // a tombstone: out of prune order
    add(50);
    assert.deepEqual(closeTimesInPruneOrder(index), [50, 100, 8e12, 1e13]);
    assert.doesNotThrow(() => TicketIndex.fromColumns(index.toColumns()));
  });

  it("a late row is folded after a removed late row's chunk was dropped", () => {
    const index = new TicketIndex();
    const add = closer(index);
    const t0 = 1_700_000_000_000;
    add(t0 + 10_000);
    add(t0 + 5_000); // late, in chunk 0
    for (let n = 2; n < CHUNK + 10; n++) add(t0 + 10_000 + n);
    add(t0 + 1_000); // late, in chunk 1: before the other in prune order
    for (let row = 0; row < CHUNK; row++) index.remove(row); // chunk 0 removed whole (tombstones): dropped
    assert.doesNotThrow(() => add(t0 + 2_000));
    assert.deepEqual(closeTimesInPruneOrder(index).slice(0, 2), [t0 + 1_000, t0 + 2_000]);
  });
});
