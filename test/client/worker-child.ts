/**
 * A Worker in a process of its own, connected to a runlog server: run by
 * worker-process.test.ts. Argument: the server's url; RUNLOG_TOKEN: the token. It serves the
 * `build` agent (the result names the input and this process), says `ready` on stdout once
 * running, and on SIGTERM stops the worker (handing back leases of runs cut short), then
 * the client, and exits 0.
 */
import { connect, Worker } from '../../src/index.ts';

const url = process.argv[2]!;
const queue = await connect({ url, ...(process.env.RUNLOG_TOKEN ? { token: process.env.RUNLOG_TOKEN } : {}) });
const worker = new Worker(queue, { concurrency: 4, holder: `child-${process.pid}` });
worker.handle('build', ({ input }) => `built ${new TextDecoder().decode(input)} in ${process.pid}`);
const stop = new AbortController();
process.once('SIGTERM', () => stop.abort());
const running = worker.run(stop.signal);
process.stdout.write('ready\n');
await running;
await queue.stop();
process.stdout.write(`stopped ${JSON.stringify(worker.metrics())}\n`);
