/**
 * Commands called in one tick are decided in call order, also a keyed submission whose key names
 * a closed entry that must first be read back from the log: a prune called after it, in the same
 * tick, no longer makes it create a new entry (found by the model-based property, seed
 * 754538429: the submission answered a new ticket where the model answered the one its key named).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { openRunQueue } from '../../src/queue/open-run-queue.ts';
import type { RunQueue } from '../../src/queue/run-queue.ts';
import { FakeClock } from '../contract/fixtures.ts';

const REQUEST = { tenant: 'acme', thread: 't1', agent: 'x', input: 'i0', key: 'k0' } as const;

/** A queue on a memory log holding one closed entry submitted with REQUEST (its id given to `body`); stopped after. */
async function withClosedKeyedEntry(body: (queue: RunQueue, entryId: string) => Promise<void>): Promise<void> {
  const clock = new FakeClock();
  const queue = await openRunQueue({ log: { kind: 'memory' }, partitions: 1, clock: clock.read });
  try {
    const { entryId } = await queue.submit(REQUEST);
    const taken = (await queue.take({ agents: ['x'], holder: 'h', ttlMs: 10_000 }))!;
    await queue.close(taken.lease, { status: 'succeeded' });
    clock.advance(1);
    await body(queue, entryId);
  } finally {
    await queue.stop();
  }
}

test('a keyed submission reading its closed entry back, then a prune in the same tick: it answers the entry its key named, not a new one', () =>
  withClosedKeyedEntry(async (queue, entryId) => {
    // In one tick: the submission (its key's closed entry is read from the log first), then the prune.
    const again = queue.submit(REQUEST);
    const pruned = queue.prune(0, 10);
    assert.deepEqual(await again, { tenant: 'acme', thread: 't1', entryId, created: false });
    assert.equal(await pruned, 1);
    assert.equal((await queue.openEntries('acme', 't1')).length, 0, 'nothing created');
  }));

test('the same for a batch: an item whose key named a closed entry read first answers it though a prune called after the batch removed it', () =>
  withClosedKeyedEntry(async (queue, entryId) => {
    const again = queue.submitBatch([REQUEST, { ...REQUEST, key: 'k1', input: 'i1' }]);
    const pruned = queue.prune(0, 10);
    const [named, fresh] = await again;
    assert.deepEqual(named, { ticket: { tenant: 'acme', thread: 't1', entryId, created: false } });
    assert.ok(fresh !== undefined && 'ticket' in fresh && fresh.ticket.created);
    assert.equal(await pruned, 1);
  }));

test('and an item or a submission whose key named it with other work is refused SubmissionKeyReused, as it would have been before the prune', () =>
  withClosedKeyedEntry(async (queue, entryId) => {
    const other = { ...REQUEST, input: 'other work' };
    const batch = queue.submitBatch([other]);
    const single = queue.submit(other);
    single.catch(() => undefined); // awaited below
    const pruned = queue.prune(0, 10);
    const [item] = await batch;
    assert.ok(item !== undefined && 'error' in item && item.error.code === 'SubmissionKeyReused', JSON.stringify(item));
    await assert.rejects(
      single,
      (error: Error & { code?: string }) => error.code === 'SubmissionKeyReused' && error.message.includes(entryId),
    );
    assert.equal(await pruned, 1);
  }));
