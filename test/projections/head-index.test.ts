/**
 * The head index drops stale items as it grows: a replay never queries it, and every lease
 * leaves an item waiting for its expiry, so without the sweep it would hold an item per
 * event. Driven through the pure fold, as a replay does. And a take filtered by tenants
 * reads only those tenants' heads, however many other tenants have.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { RunlogEvent } from '../../src/events/types.ts';
import { recordKeyOf } from '../../src/events/keys.ts';
import { HeadIndex } from '../../projections/head-index.ts';
import type { IndexedHead } from '../../projections/head-queue.ts';
import { PartitionView } from '../../projections/partition-view.ts';
import { submittedEvent } from '../../bench/submitted-event.ts';

function lifecycle(seq: number, at: number): RunlogEvent[] {
  const ids = { tenant: 'acme', thread: `t${seq % 50}`, entryId: `0-${seq}` };
  return [
    submittedEvent({ ...ids, at, seq }),
    { type: 'Leased', ...ids, at, holder: 'w', epoch: 1, expiresAt: at + 60_000, deferredAttempts: 0 },
    { type: 'AttemptStarted', ...ids, at, runId: `run-${seq}`, attempt: 1, epoch: 1 },
    { type: 'Closed', ...ids, at, outcome: 'succeeded', result: null, error: null, deferredAttempts: 0 },
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
    const heads = view.entries.get(open.entryId!)!.heads;
    assert.ok(heads.itemCount < 5_000, `the index holds ${heads.itemCount} items after 20,000 leases`);
    assert.equal(view.bestHead(['build'], 50_000)?.entryId, open.entryId);
  });
});

/** A head as the index reads it (the fold's EntryState has these fields; here they are set by hand). */
class Head implements IndexedHead {
  notBefore: number | null = null;
  lease: { expiresAt: number } | null = null;
  version = 0;
  closed = false;
  constructor(
    readonly tenant: string,
    readonly seq: number,
    readonly priority = 0,
    readonly submittedAt = 1_000,
  ) {}
}

describe('head index by tenant', () => {
  it("a filtered query reads only the named tenants' heads, never another tenant's backlog", () => {
    const index = new HeadIndex<Head>('build');
    const backlog = Array.from({ length: 10_000 }, (_, i) => new Head('acme', i + 1, 5));
    for (const head of backlog) index.offer(head);
    const globex = [new Head('globex', 20_001, 0, 2_000), new Head('globex', 20_002, 1, 3_000)];
    for (const head of globex) index.offer(head);
    const seen = new Set<string>();
    const isHead = (head: Head): boolean => {
      seen.add(head.tenant);
      return true;
    };
    assert.equal(index.best(5_000, isHead, ['globex', 'initech'])?.seq, 20_002, 'higher priority first among globex');
    assert.deepEqual([...seen], ['globex'], 'no acme head was looked at');
    // acme's stale heads (all leased since they were offered) are skipped by unfiltered queries only.
    for (const head of backlog) head.version++;
    seen.clear();
    assert.equal(index.best(5_000, isHead, ['globex'])?.seq, 20_002);
    assert.deepEqual([...seen], ['globex']);
    assert.equal(index.best(5_000, isHead, null)?.seq, 20_002, 'unfiltered: acme holds nothing current');
    assert.equal(index.best(5_000, isHead, ['acme']), undefined);
  });

  it('nextAt by tenant: the earliest waiting head of the named tenants', () => {
    const index = new HeadIndex<Head>('build');
    const [a, b] = [new Head('acme', 1), new Head('globex', 2)];
    a.notBefore = 5_000;
    b.notBefore = 9_000;
    index.offer(a);
    index.offer(b);
    const isHead = (): boolean => true;
    assert.deepEqual(
      [
        index.nextAt(isHead, null),
        index.nextAt(isHead, ['globex']),
        index.nextAt(isHead, ['initech', 'acme']),
        index.nextAt(isHead, ['x']),
      ],
      [5_000, 9_000, 5_000, null],
    );
    assert.equal(index.best(8_000, isHead, ['globex']), undefined);
    assert.equal(index.best(9_000, isHead, ['globex'])?.seq, 2);
  });

  it('the sweep bounds every queue and forgets tenants left without a current head, with no query at all', () => {
    const index = new HeadIndex<Head>('build');
    for (let i = 0; i < 5_000; i++) {
      const head = new Head(`tenant-${i}`, i + 1);
      index.offer(head);
      head.closed = true; // closed before anyone asked: its items are stale at once
    }
    const live = new Head('last', 9_999);
    index.offer(live);
    assert.ok(index.itemCount < 2 * 1_024 * 2, `the index holds ${index.itemCount} items after 5,001 offers`);
    assert.ok(index.tenantCount < 1_100, `the index keeps ${index.tenantCount} tenants`);
    assert.equal(index.best(0, () => true, ['last'])?.seq, 9_999);
  });
});
