/**
 * Many closed tickets fast, for the snapshot tests that need more than one stretch of them
 * (snapshot-stretches.test.ts and its child): entries submitted a batch at a time on threads of
 * their own (every third with a key), every seventh cancelled unstarted (no attempt), the rest
 * taken and started in one command and closed in one batch, succeeded or failed.
 */
import type { RunQueue } from '../../src/queue/run-queue.ts';

/** Who hears of each acknowledged submission and each acknowledged close that succeeded. */
export interface Acks {
  submitted(entryId: string, input: string): void;
  closed(entryId: string): void;
}

const BATCH = 2_000;

/** Closes `count` entries of `tenant` named `<prefix>-<i>`; `tick` before each batch (a fake clock's advance). */
export async function closeInBulk(
  queue: RunQueue,
  tenant: string,
  prefix: string,
  count: number,
  tick: () => void,
  acks: Acks,
): Promise<void> {
  for (let from = 0; from < count; from += BATCH) {
    tick();
    const inputs = Array.from({ length: Math.min(BATCH, count - from) }, (_, i) => `${prefix}-${from + i}`);
    const answers = await queue.submitBatch(
      inputs.map((input, i) => ({ tenant, thread: input, agent: 'bulk', input, ...(i % 3 === 0 ? { key: input } : {}) })),
    );
    const ids: string[] = [];
    for (const [i, answer] of answers.entries()) {
      if (!('ticket' in answer)) throw answer.error;
      acks.submitted(answer.ticket.entryId, inputs[i]!);
      ids.push(answer.ticket.entryId);
    }
    for (let i = 0; i < ids.length; i += 7) await queue.cancel(tenant, ids[i]!, 'bulk');
    const started = await queue.takeStarted({ agents: ['bulk'], holder: prefix, ttlMs: 600_000, max: ids.length });
    const closes = await queue.closeBatch(
      started.map(({ lease }, i) => ({
        lease,
        request: { status: i % 4 === 0 ? ('failed' as const) : ('succeeded' as const), error: 'e' },
      })),
    );
    for (const answer of closes) {
      if (!('entry' in answer)) throw answer.error;
      if (answer.entry.outcome === 'succeeded') acks.closed(answer.entry.entryId);
    }
  }
}

/** Acks that fill a record of what was acknowledged (crash-rounds.ts Acknowledged). */
export function recorded(ack: { submitted: Map<string, string>; closed: Set<string> }): Acks {
  return { submitted: (entryId, input) => ack.submitted.set(entryId, input), closed: (entryId) => ack.closed.add(entryId) };
}

/** Acks that pass on every `every`-th entry's submission (by the number its input ends with) and no close: reading back every closed entry is slow. */
export function sampled(acks: Acks, every: number): Acks {
  return {
    submitted: (entryId, input) => {
      if (Number(input.split('-').at(-1)) % every === 0) acks.submitted(entryId, input);
    },
    closed: () => {},
  };
}
