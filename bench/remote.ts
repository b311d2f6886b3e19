/**
 * The remote run: the same figures through HTTP. A RunQueue on the bench's log behind an
 * in-process `startServer` (loopback, a free port, no tokens), called through the client
 * (`connect()`), the way producers and workers in other processes call `runlog serve`.
 *
 * - Lifecycles/s: 64 callers each submit, take, startAttempt and close through one client
 *   (throughput.ts's lifecycle, unchanged); client, server and queue share this process.
 * - Submit-to-start: a Worker over its own client in a child process (remote-worker.ts) runs
 *   the entries; this process submits through a client at a fixed rate (open loop) and the
 *   child reports when each handler started. Both read the time as performance.timeOrigin +
 *   performance.now() (wall time at process start, then the monotonic clock), so the two
 *   processes' readings agree to well under a millisecond over a run.
 */
import { fork } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { connect } from '../src/client/index.ts';
import { openRunQueue } from '../src/queue/open-run-queue.ts';
import type { RunQueue } from '../src/queue/run-queue.ts';
import type { RunQueueApi } from '../src/queue/types.ts';
import { openAuthenticator } from '../src/server/auth.ts';
import { startServer, type RunningServer } from '../src/server/start-server.ts';
import type { LogSite } from './logs.ts';
import { AGENT, TENANT, concurrently, lifecycle, type Rate } from './throughput.ts';
import type { StartReport, WorkerCommand } from './remote-worker.ts';
import { SubmitTimes, generate } from './open-loop.ts';

const SILENT = { log: () => {} };

export interface RemoteLatency {
  offeredPerSecond: number;
  achievedPerSecond: number;
  samples: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** Entries submitted in the timed window that the worker had not started when the run ended. */
  unstarted: number;
}

/** Epoch ms with sub-millisecond resolution, comparable across processes on one machine. */
export function epochNow(): number {
  return performance.timeOrigin + performance.now();
}

/** A queue on `site` served over HTTP on loopback; `body` gets the server's url. */
async function served<T>(site: LogSite, body: (url: string, queue: RunQueue) => Promise<T>): Promise<T> {
  const queue = await openRunQueue({ log: site.config, partitions: site.partitions });
  let server: RunningServer | undefined;
  try {
    server = await startServer({
      queue,
      log: queue.log,
      authenticator: openAuthenticator(),
      logger: SILENT,
      host: '127.0.0.1',
      port: 0,
      maxInputBytes: queue.maxInputBytes,
    });
    return await body(server.url, queue);
  } finally {
    await server?.close();
    await queue.stop();
  }
}

async function withClient<T>(url: string, body: (client: RunQueueApi) => Promise<T>): Promise<T> {
  const client = await connect({ url });
  try {
    return await body(client);
  } finally {
    await client.stop();
  }
}

/** Lifecycles/s of `callers` concurrent callers through the client. */
export async function remoteLifecycleRate(site: LogSite, callers: number, durationMs: number, warmupMs: number): Promise<Rate> {
  return served(site, (url) =>
    withClient(url, async (client) => {
      await concurrently(callers, warmupMs, (caller, n) => lifecycle(client, caller, n));
      return concurrently(callers, durationMs, (caller, n) => lifecycle(client, caller, n + 1_000_000_000));
    }),
  );
}

/** Submit-to-start latency through a remote Worker (a child process) at `perSecond` submits/s. */
export async function remoteSubmitToStart(
  site: LogSite,
  perSecond: number,
  concurrency: number,
  durationMs: number,
  warmupMs: number,
): Promise<RemoteLatency> {
  return served(site, (url) =>
    withClient(url, async (producer) => {
      const child = fork(fileURLToPath(new URL('./remote-worker.ts', import.meta.url)), [url, String(concurrency)], {
        execArgv: ['--import', 'tsx'],
        stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      });
      const exited = once(child, 'exit');
      try {
        await nextMessage(child, 'ready');
        const submittedAt = new SubmitTimes((perSecond * (warmupMs + durationMs) * 1.1) / 1000);
        const measureFrom = epochNow() + warmupMs;
        const { submitted, seconds } = await generate(
          producer,
          { tenant: TENANT, agent: AGENT, threadPrefix: 'remote-', perSecond, durationMs: warmupMs + durationMs, clock: epochNow },
          submittedAt,
        );
        const report = await finish(child, submitted);
        return summarize(submittedAt, report, measureFrom, perSecond, submitted / seconds);
      } finally {
        if (child.exitCode === null) child.kill();
        await exited;
      }
    }),
  );
}

/** Waits until the worker started every submitted entry (or a while after), then stops it and reads its report. */
async function finish(child: ReturnType<typeof fork>, submitted: number): Promise<StartReport> {
  send(child, { type: 'drain', expected: submitted });
  await nextMessage(child, 'drained');
  send(child, { type: 'stop' });
  return (await nextMessage(child, 'report')) as StartReport;
}

function send(child: ReturnType<typeof fork>, command: WorkerCommand): void {
  child.send(command);
}

function nextMessage(child: ReturnType<typeof fork>, type: string): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const onMessage = (message: { type?: string }): void => {
      if (message?.type !== type) return;
      cleanup();
      resolve(message);
    };
    const onExit = (code: number | null): void => {
      cleanup();
      reject(new Error(`the remote worker exited (${code}) before it sent ${type}`));
    };
    const cleanup = (): void => {
      child.off('message', onMessage);
      child.off('exit', onExit);
    };
    child.on('message', onMessage);
    child.on('exit', onExit);
  });
}

function summarize(
  submittedAt: SubmitTimes,
  report: StartReport,
  measureFrom: number,
  offeredPerSecond: number,
  achievedPerSecond: number,
): RemoteLatency {
  const startedAt = new Map(report.starts);
  const latencies: number[] = [];
  let unstarted = 0;
  for (const [n, at] of submittedAt.entries()) {
    if (at < measureFrom) continue;
    const start = startedAt.get(n);
    if (start === undefined) unstarted++;
    else latencies.push(start - at);
  }
  latencies.sort((a, b) => a - b);
  const at = (q: number): number => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? NaN;
  return {
    offeredPerSecond,
    achievedPerSecond,
    samples: latencies.length,
    p50Ms: at(0.5),
    p99Ms: at(0.99),
    maxMs: latencies[latencies.length - 1] ?? NaN,
    unstarted,
  };
}
