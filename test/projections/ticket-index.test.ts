/**
 * The ticket index's compact columns (projections/ticket-index.ts): tenant ids in 1 byte,
 * widened to 2 and then 4 as tenants appear, and seqs, close times and offsets as 4-byte
 * deltas (delta-column.ts), far apart or near: every row reads back what was added, also
 * through its columns (a snapshot's) and after pruning the front.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { TicketIndex, type ClosingTicket, type TicketRecords } from '../../projections/ticket-index.ts';

function ticket(n: number, tenants: number): { ticket: ClosingTicket; records: TicketRecords } {
  // Every 7th row's seq and offsets jump far (differences past 2^31).
  const far = n % 7 === 3 ? 2 ** 40 : 0;
  const submittedOffset = far + n * 3;
  return {
    ticket: {
      seq: far + n + 1,
      tenant: `tenant-${n % tenants}`,
      outcome: n % 2 === 0 ? 'succeeded' : 'failed',
      // Non-decreasing (prune order is by close time), 2^20 ms apart: a chunk of rows spans more than 2^31 ms.
      closedAt: 1_700_000_000_000 + n * 2 ** 20,
      keyHash: n % 3 === 0 ? (n * 2654435761) >>> 0 : null,
      runHashes: [(n * 40503) >>> 0],
      deferredAttempts: 0,
    },
    records: { submittedOffset, attemptOffsets: [submittedOffset + 1], closeOffset: submittedOffset + 2 },
  };
}

function check(index: TicketIndex, from: number, count: number, tenants: number): void {
  for (let n = from; n < count; n++) {
    const { ticket: t, records } = ticket(n, tenants);
    const row = index.rowOf(t.seq);
    assert.ok(row >= 0, `row of seq ${t.seq}`);
    assert.deepEqual(
      [index.tenantOf(row), index.outcomeOf(row), index.closedAtOf(row), index.recordsOf(row), index.runHashesOf(row)],
      [t.tenant, t.outcome, t.closedAt, records, t.runHashes],
      `row ${n}`,
    );
  }
}

describe('TicketIndex columns', () => {
  for (const tenants of [3, 300, 70_000]) {
    it(`${tenants} tenants: every row reads back as added, through its columns, and after the front is pruned`, () => {
      const count = Math.max(20_000, tenants + 1_000);
      const index = new TicketIndex();
      for (let n = 0; n < count; n++) {
        const { ticket: t, records } = ticket(n, tenants);
        index.add(t, records);
      }
      check(index, 0, count, tenants);
      check(TicketIndex.fromColumns(index.toColumns()), 0, count, tenants);
      const pruned = Math.floor(count * 0.6);
      for (const row of index.oldest(pruned, () => true)) index.remove(row);
      assert.equal(index.size, count - pruned);
      check(index, pruned, count, tenants);
    });
  }

  it('record offsets 1, 2 and 4 bytes past their Submitted (each chunk of deltas as wide as it needs): loaded from columns, then added and settled live', () => {
    // Chunk 0's deltas fit a byte, chunk 1's two, chunk 2's four; chunk 3 holds a byte's until rows added live need more.
    const gapOf = (n: number): number => [3, 300, 70_000, 5][Math.min(3, Math.floor(n / 65_536))]!;
    const entry = (n: number): { ticket: ClosingTicket; records: TicketRecords } => {
      const submittedOffset = n * 100_000;
      const gap = n > 200_000 ? [7, 700, 2 ** 20][n % 3]! : gapOf(n);
      const ticket: ClosingTicket = {
        seq: n + 1,
        tenant: 't',
        outcome: 'succeeded',
        closedAt: 1_700_000_000_000 + n,
        keyHash: null,
        runHashes: [n >>> 0, (n * 7) >>> 0],
        deferredAttempts: n % 4,
      };
      return {
        ticket,
        records: { submittedOffset, attemptOffsets: [submittedOffset + 1, submittedOffset + gap - 1], closeOffset: submittedOffset + gap },
      };
    };
    const original = new TicketIndex();
    for (let n = 0; n < 200_000; n++) original.add(entry(n).ticket, entry(n).records);
    const index = TicketIndex.fromColumns(original.toColumns());
    for (let n = 200_000; n < 200_300; n++) {
      const row = index.add(entry(n).ticket, n % 2 === 0 ? entry(n).records : null);
      if (n % 2 === 1) index.settle(row, entry(n).records);
    }
    for (let n = 0; n < 200_300; n += n < 199_000 ? 61 : 1) {
      const row = index.rowOf(n + 1);
      assert.deepEqual([index.recordsOf(row), index.deferredAttemptsOf(row)], [entry(n).records, n % 4], `row ${n}`);
    }
  });
});
