/**
 * The parent's side of the SIGKILL tests on the file log (queue-crash.test.ts,
 * snapshot-crash.test.ts): a child serving a RunQueue prints a line per acknowledged command
 * (`submitted <entryId> <input>`, `closed <entryId>`) as soon as it is answered; the parent
 * records them and SIGKILLs the child after so many; after each kill, every acknowledged
 * submission must be there with its input, every acknowledged close closed.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { RunQueue } from '../../src/queue/run-queue.ts';

/** What a child acknowledged, over every round. */
export interface Acknowledged {
  /** Input by entry id. */
  submitted: Map<string, string>;
  closed: Set<string>;
}

/**
 * Runs `child` (a file of this folder, given the log's `dir` and `round`) and SIGKILLs it once it
 * has acknowledged `after` commands of the kind `counting` (any: submissions and closes).
 */
export function runAndKill(
  child: string,
  dir: string,
  round: number,
  kill: { after: number; counting: 'any' | 'closed' },
  ack: Acknowledged,
): Promise<void> {
  const running = spawn(process.execPath, ['--import', 'tsx', join(import.meta.dirname, child), dir, String(round)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let count = 0;
  return new Promise((resolve, reject) => {
    createInterface({ input: running.stdout }).on('line', (line) => {
      const [kind, entryId, input] = line.split(' ');
      if (kind === 'submitted') ack.submitted.set(entryId!, input!);
      if (kind === 'closed') ack.closed.add(entryId!);
      const counted = kill.counting === 'any' ? kind !== 'ready' : kind === kill.counting;
      if (counted && ++count === kill.after) running.kill('SIGKILL');
    });
    running.on('exit', (code, signal) => (signal === 'SIGKILL' ? resolve() : reject(new Error(`child exited with ${code}`))));
  });
}

/** Every acknowledged submission is in `queue` with its input (tenant: `tenantOf` its input), every acknowledged close closed. */
export async function assertAcknowledgedKept(queue: RunQueue, ack: Acknowledged, tenantOf: (input: string) => string): Promise<void> {
  for (const [entryId, input] of ack.submitted) {
    const entry = await queue.entry(tenantOf(input), entryId);
    assert.equal(new TextDecoder().decode(entry.input), input, `entry ${entryId}`);
    if (ack.closed.has(entryId)) assert.equal(entry.outcome, 'succeeded', `entry ${entryId} was acknowledged closed`);
  }
}
