/**
 * Crash test: a child process serving a RunQueue on the file log under load is killed
 * with SIGKILL; on reopen every acknowledged command is there, the torn tail (if any)
 * was cut, replay equals the live view, and the queue serves.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { openRunQueue } from '../../src/queue/open-run-queue.ts';
import { assertReplayEqualsLive } from '../contract/fixtures.ts';
import { scratchDir } from '../support/cleanup.ts';
import { assertAcknowledgedKept, runAndKill, type Acknowledged } from './crash-rounds.ts';

describe('RunQueue crash safety on the file log', () => {
  it('every acknowledged command survives SIGKILL under load, round after round', async (t) => {
    const dir = await scratchDir(t, 'runlog-crash-');
    const ack: Acknowledged = { submitted: new Map(), closed: new Set() };
    for (let round = 0; round < 3; round++) {
      await runAndKill('crash-child.ts', dir, round, { after: 1500 + round * 500, counting: 'any' }, ack);
      const queue = await openRunQueue({ log: { kind: 'file', dir }, partitions: 4 });
      try {
        await assertAcknowledgedKept(queue, ack, () => 'crash');
        await assertReplayEqualsLive(queue);
        const ticket = await queue.submit({ tenant: 'crash', thread: `after-${round}`, agent: 'b', input: 'x' });
        const taken = await queue.take({ agents: ['b'], holder: 'after', ttlMs: 1000 });
        assert.equal(taken?.lease.entryId, ticket.entryId);
        await queue.close(taken!.lease, { status: 'succeeded' });
      } finally {
        await queue.stop();
      }
    }
    assert.ok(ack.submitted.size > 1000, `only ${ack.submitted.size} submissions acknowledged`);
  });
});
