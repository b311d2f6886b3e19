/**
 * The closed-entry cache (src/queue/closed-entries.ts): an lru-cache bounded by bytes. Its
 * bytes never pass closedCacheBytes; the entries closed or read most recently stay, the least
 * recently used go first; one larger than half the cache is not kept; 0 keeps nothing.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { closedEntryBytes, type ClosedEntry } from '../../projections/closed-entry.ts';
import { ClosedEntryCache } from '../../src/queue/closed-entries.ts';

function closed(n: number, inputBytes = 100): ClosedEntry {
  return {
    entryId: `entry-${n}`,
    seq: n,
    tenant: 'acme',
    thread: `thread-${n}`,
    agent: 'build',
    input: new Uint8Array(inputBytes),
    key: null,
    priority: 0,
    deadline: null,
    maxAttempts: 3,
    metadata: {},
    submittedAt: 1,
    notBefore: null,
    lease: null,
    attempts: [{ runId: `run-${n}`, attempt: 1, epoch: 1, startedAt: 2 }],
    deferredAttempts: 0,
    outcome: 'succeeded',
    result: null,
    error: null,
    closedAt: 3,
    closed: true,
  };
}

const ONE = closedEntryBytes(closed(0));

describe('closed-entry cache', () => {
  it('never holds more bytes than its bound, and keeps the entries closed last', () => {
    const cache = new ClosedEntryCache(ONE * 10);
    for (let n = 0; n < 100; n++) {
      cache.set(closed(n));
      assert.ok(cache.size.bytes <= ONE * 10, `${cache.size.bytes} bytes held after ${n + 1} entries, bound ${ONE * 10}`);
      assert.equal(cache.get(`entry-${n}`)?.seq, n, 'the entry just closed is held');
    }
    assert.equal(cache.get('entry-0'), undefined, 'the oldest went');
    const each = closedEntryBytes(closed(99)); // entries 10-99 count the same bytes, a little more than entry-0
    assert.equal(cache.size.entries, Math.floor((ONE * 10) / each), 'as many of the last entries as the bound holds are kept');
  });

  it('lets the least recently used entry go first', () => {
    const cache = new ClosedEntryCache(ONE * 3);
    for (const n of [1, 2, 3]) cache.set(closed(n));
    assert.equal(cache.get('entry-1')?.seq, 1, 'entry-1 read: now the most recently used');
    cache.set(closed(4));
    assert.equal(cache.get('entry-2'), undefined, 'entry-2, used least recently, went');
    assert.deepEqual(
      [1, 3, 4].map((n) => cache.get(`entry-${n}`)?.seq),
      [1, 3, 4],
    );
    assert.deepEqual(cache.size, { entries: 3, bytes: ONE * 3 });
  });

  it('an entry read again stays while entries closed before and after it go', () => {
    const cache = new ClosedEntryCache(ONE * 10);
    for (let n = 0; n < 100; n++) {
      cache.set(closed(n));
      assert.equal(cache.get('entry-0')?.seq, 0, `entry-0, read after each close, is held after ${n + 1} closes`);
    }
    assert.equal(cache.get('entry-1'), undefined);
  });

  it('keeps nothing larger than half its bound, and nothing at all with 0 bytes', () => {
    const cache = new ClosedEntryCache(ONE * 4);
    cache.set(closed(1, ONE * 2));
    assert.equal(cache.get('entry-1'), undefined);
    cache.set(closed(2));
    assert.equal(cache.get('entry-2')?.seq, 2);
    const none = new ClosedEntryCache(0);
    none.set(closed(3));
    assert.equal(none.get('entry-3'), undefined);
    assert.deepEqual(none.size, { entries: 0, bytes: 0 });
  });
});
