/**
 * Child process of queue-crash.test.ts: runs a RunQueue on the file log in argv[2] and
 * drives it with 32 concurrent callers (submit, take, startAttempt, close), printing one
 * line per acknowledged command as soon as it is answered. The parent SIGKILLs it.
 */
import { openRunQueue } from '../../src/queue/open-run-queue.ts';

const dir = process.argv[2]!;
const round = process.argv[3] ?? '0';
const queue = await openRunQueue({ log: { kind: 'file', dir }, partitions: 4 });
process.stdout.write('ready\n');

async function caller(id: number): Promise<void> {
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

await Promise.all(Array.from({ length: 32 }, (_, id) => caller(id)));
