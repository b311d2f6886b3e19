/**
 * The head index drops stale items as it grows: a replay never queries it, and every lease
 * leaves an item waiting for its expiry, so without the sweep it would hold an item per
 * event. Driven through the pure fold, as a replay does.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { RunlogEvent } from '../../src/events/types.ts';
import { recordKeyOf } from '../../src/events/keys.ts';
import { PartitionView } from '../../projections/partition-view.ts';
import { submittedEvent } from '../support/submitted-event.ts';

function lifecycle(seq: number, at: number): RunlogEvent[] {
  const ids = { tenant: 'acme', thread: `t${seq % 50}`, entryId: `0-${seq}` };
  return [
    submittedEvent({ ...ids, at, seq }),
    { type: 'Leased', ...ids, at, holder: 'w', epoch: 1, expiresAt: at + 60_000, deferredAttempts: 0 },
    { type: 'AttemptStarted', ...ids, at, runId: `run-${seq}`, attempt: 1, epoch: 1 },
    { type: 'Closed', ...ids, at, outcome: 'succeeded', result: null, error: null },
  ];
}

describe('head index', () => {
  it('stays bounded over a long replay of leases and closes, and still answers the right head', () => {
    const view = new PartitionView(0);
    let offset = 0n;
    const fold = (event: RunlogEvent) => view.apply(offset++, recordKeyOf(event), event);
    for (let seq = 1; seq <= 20_000; seq++) lifecycle(seq, 1_000 + seq).forEach(fold);
    const open = lifecycle(20_001, 50_000)[0]!;
    fold(open);
    const heads = view.entries.get(open.entryId)!.heads;
    assert.ok(heads.itemCount < 5_000, `the index holds ${heads.itemCount} items after 20,000 leases`);
    assert.equal(view.bestHead(['build'], 50_000)?.entryId, open.entryId);
  });
});
