import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { openLog, openRunQueueOnLog, partitionOf, replayPartition } from '../../src/index.ts';
import { threadKey } from '../../src/events/keys.ts';
import { murmur2, threadKeyBytes, toPositive } from '../../src/log/partitioner.ts';

const PARTITIONS = 8;
/** Names the queue takes: well-formed, no NUL (fast-check's 'binary' units can make lone surrogates). */
const name = fc.string({ unit: 'grapheme', minLength: 1, maxLength: 12 }).filter((s) => !s.includes('\u0000'));

describe('thread key', () => {
  it('the partition a thread is routed to holds it in its view under the key whose bytes chose that partition', async (t) => {
    const log = await openLog({ kind: 'memory' }, PARTITIONS);
    const queue = await openRunQueueOnLog(log);
    t.after(() => queue.stop());
    const threads = [
      ['acme', 'order-7'],
      ['acme', 'order-8'],
      ['globex', 'order-7'],
      ['ü😀', 'x\u0001y'],
      ['a', 'b'],
      ['ab', 'b'],
    ] as const;
    for (const [tenant, thread] of threads) await queue.submit({ tenant, thread, agent: 'build', input: 'x' });
    const heldBy = new Map<string, number>();
    for (let p = 0; p < PARTITIONS; p++)
      for (const held of (await replayPartition(log, p)).threads.values()) heldBy.set(threadKey(held.tenant, held.thread), p);
    assert.equal(new Set(heldBy.values()).size > 1, true, 'the threads spread over partitions');
    for (const [tenant, thread] of threads) {
      const key = threadKey(tenant, thread);
      assert.equal(heldBy.get(key), partitionOf(tenant, thread, PARTITIONS), `${tenant}/${thread}`);
      assert.equal(toPositive(murmur2(new TextEncoder().encode(key))) % PARTITIONS, heldBy.get(key), `${tenant}/${thread}`);
    }
  });

  it('the partitioner hashes the UTF-8 bytes of the thread key', () => {
    fc.assert(
      fc.property(name, name, (tenant, thread) => {
        assert.equal(new TextDecoder('utf-8', { fatal: true }).decode(threadKeyBytes(tenant, thread)), threadKey(tenant, thread));
      }),
    );
  });
});
