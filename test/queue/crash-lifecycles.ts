/**
 * The load the crash children (crash-child.ts, snapshot-crash-child.ts) put on their queue:
 * a caller running whole lifecycles (submit, take, startAttempt, close) on a thread of its
 * own, for ever, printing each acknowledged submission and close as soon as it is answered
 * (crash-rounds.ts reads them). Its inputs are `r<round>-c<caller>-<i>`, tenant `crash`.
 */
import type { RunQueue } from '../../src/queue/run-queue.ts';

export async function lifecycles(queue: RunQueue, round: string, id: number): Promise<void> {
  for (let i = 0; ; i++) {
    const thread = `r${round}-c${id}`;
    const input = `${thread}-${i}`;
    const ticket = await queue.submit({ tenant: 'crash', thread, agent: 'a', input });
    process.stdout.write(`submitted ${ticket.entryId} ${input}\n`);
    const taken = await queue.take({ agents: ['a'], holder: `h${id}`, ttlMs: 60_000 });
    if (taken === null) continue;
    await queue.startAttempt(taken.lease, `run-${round}-${id}-${i}`);
    await queue.close(taken.lease, { status: 'succeeded', result: 'ok' });
    process.stdout.write(`closed ${taken.lease.entryId}\n`);
  }
}
