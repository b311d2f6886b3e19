/**
 * Child process of snapshot-crash.test.ts: a RunQueue on the file log in argv[2] with
 * snapshots due often (by records and by time), fed by one caller submitting 30 batches of
 * open entries (a backlog that grows round after round) and 8 callers running whole
 * lifecycles. Prints one line per acknowledged entry as soon as it is answered; the parent
 * SIGKILLs it at a random moment, between snapshots or in the middle of one.
 */
import { openRunQueue } from '../../src/queue/open-run-queue.ts';
import { lifecycles } from './crash-lifecycles.ts';

const dir = process.argv[2]!;
const round = process.argv[3] ?? '0';
const queue = await openRunQueue({ log: { kind: 'file', dir }, partitions: 2, snapshots: { everyRecords: 500, everyMs: 25 } });
process.stdout.write('ready\n');

async function batcher(): Promise<void> {
  for (let b = 0; b < 30; b++) {
    const requests = Array.from({ length: 150 }, (_, i) => ({
      tenant: 'backlog',
      thread: `r${round}-b${b % 7}-${i % 50}`,
      agent: 'never-taken',
      input: `r${round}-${b}-${i}`,
      ...(i % 3 === 0 ? { key: `k-${round}-${b}-${i}` } : {}),
    }));
    await new Promise((resolve) => setTimeout(resolve, 10));
    const answers = await queue.submitBatch(requests);
    for (const [i, answer] of answers.entries()) {
      if ('ticket' in answer) process.stdout.write(`submitted ${answer.ticket.entryId} ${requests[i]!.input}\n`);
    }
  }
}

await Promise.all([batcher(), ...Array.from({ length: 8 }, (_, id) => lifecycles(queue, round, id))]);
