/**
 * Child process of worker-crash.test.ts: a Worker (64 slots, quick handlers) on a RunQueue
 * over the file log in argv[2], whose wall clock runs argv[3] ms ahead (so the leases a killed
 * predecessor held have expired). It prints `ran <entryId> <attempt>` as a handler starts and
 * `closed <entryId> <attempt>` once the worker reports the close durable (onEvent succeeded).
 * Writes to a pipe are synchronous on Linux: a line printed is the parent's even if the
 * process is killed right after. The parent SIGKILLs it mid-run.
 */
import { openRunQueue } from '../../src/queue/open-run-queue.ts';
import { Worker } from '../../src/worker/worker.ts';

const dir = process.argv[2]!;
const aheadMs = Number(process.argv[3] ?? '0');
const queue = await openRunQueue({ log: { kind: 'file', dir }, clock: () => Date.now() + aheadMs });
const worker = new Worker(queue, {
  concurrency: 64,
  leaseMs: 60_000,
  logger: () => {},
  onEvent: (event) => {
    if (event.type === 'succeeded') process.stdout.write(`closed ${event.entryId} ${event.attempt}\n`);
  },
});
worker.handle('crash', async ({ entry, attempt }) => {
  process.stdout.write(`ran ${entry.entryId} ${attempt}\n`);
  await new Promise((resolve) => setImmediate(resolve));
  return `ok-${attempt}`;
});
process.stdout.write('ready\n');
await worker.run(new AbortController().signal);
