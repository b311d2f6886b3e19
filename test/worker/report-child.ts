/**
 * A worker with every default (logger included) whose handler fails: run by report.test.ts
 * as a child process, which reads what it wrote on stderr. Prints the entry id on stdout.
 */
import { openRunQueue, Worker } from '../../src/index.ts';

const queue = await openRunQueue({ log: { kind: 'memory' } });
const ticket = await queue.submit({ tenant: 'acme', thread: 't', agent: 'billing', input: 'x', maxAttempts: 2 });
const worker = new Worker(queue, { backoff: () => 0 });
worker.handle('billing', () => {
  throw new Error('card declined');
});
const stop = new AbortController();
const running = worker.run(stop.signal);
await queue.awaitClosed('acme', ticket.entryId);
await worker.waitIdle();
stop.abort();
await running;
await queue.stop();
process.stdout.write(`${ticket.entryId}\n`);
