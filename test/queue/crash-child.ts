/**
 * Child process of queue-crash.test.ts: runs a RunQueue on the file log in argv[2] and
 * drives it with 32 concurrent callers running whole lifecycles (crash-lifecycles.ts), each
 * printing a line per acknowledged command as soon as it is answered. The parent SIGKILLs it.
 */
import { openRunQueue } from '../../src/queue/open-run-queue.ts';
import { lifecycles } from './crash-lifecycles.ts';

const dir = process.argv[2]!;
const round = process.argv[3] ?? '0';
const queue = await openRunQueue({ log: { kind: 'file', dir }, partitions: 4 });
process.stdout.write('ready\n');

await Promise.all(Array.from({ length: 32 }, (_, id) => lifecycles(queue, round, id)));
