/**
 * Crash test: a child process serving a RunQueue on the file log under load is killed
 * with SIGKILL; on reopen every acknowledged command is there, the torn tail (if any)
 * was cut, replay equals the live view, and the queue serves.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { describe, it } from 'node:test';
import { openRunQueue } from '../../src/queue/open-run-queue.ts';
import { assertReplayEqualsLive } from '../contract/fixtures.ts';
import { scratchDir } from '../support/cleanup.ts';

interface Acknowledged {
  submitted: Map<string, string>;
  closed: Set<string>;
}

/** Runs the child until it has acknowledged `acks` commands, then SIGKILLs it. */
function runAndKill(dir: string, round: number, acks: number, ack: Acknowledged): Promise<void> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(import.meta.dirname, 'crash-child.ts'), dir, String(round)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let count = 0;
  return new Promise((resolve, reject) => {
    createInterface({ input: child.stdout }).on('line', (line) => {
      const [kind, entryId, input] = line.split(' ');
      if (kind === 'submitted') ack.submitted.set(entryId!, input!);
      if (kind === 'closed') ack.closed.add(entryId!);
      if (kind !== 'ready' && ++count === acks) child.kill('SIGKILL');
    });
    child.on('exit', (code, signal) => (signal === 'SIGKILL' ? resolve() : reject(new Error(`child exited with ${code}`))));
  });
}

describe('RunQueue crash safety on the file log', () => {
  it('every acknowledged command survives SIGKILL under load, round after round', async (t) => {
    const dir = await scratchDir(t, 'runlog-crash-');
    const ack: Acknowledged = { submitted: new Map(), closed: new Set() };
    for (let round = 0; round < 3; round++) {
      await runAndKill(dir, round, 1500 + round * 500, ack);
      const queue = await openRunQueue({ log: { kind: 'file', dir }, partitions: 4 });
      try {
        for (const [entryId, input] of ack.submitted) {
          const entry = await queue.entry('crash', entryId);
          assert.equal(new TextDecoder().decode(entry.input), input, `entry ${entryId}`);
          if (ack.closed.has(entryId)) assert.equal(entry.outcome, 'succeeded', `entry ${entryId} was acknowledged closed`);
        }
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
