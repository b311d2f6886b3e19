/**
 * The client as a backend of the RunQueue and Worker suites: a transport that puts a real
 * server (startServer on 127.0.0.1, a free port) in front of the suite's RunQueue and
 * connects the client to it. The client's now() follows the server's fake store clock: it is
 * given that clock as its monotonic clock (the server stamps every answer with its now).
 */
import { connect, type ConnectOptions, type RemoteQueue } from '../../src/client/index.ts';
import type { RunQueue } from '../../src/queue/run-queue.ts';
import { openAuthenticator } from '../../src/server/auth.ts';
import { startServer, type RunningServer } from '../../src/server/start-server.ts';
import type { Authenticator, Logger } from '../../src/server/types.ts';
import type { FakeClock, Transport } from '../contract/fixtures.ts';

/** The server's log lines are not what these suites check. */
export const quietLogger: Logger = { log: () => {} };

export interface ServeOptions {
  authenticator?: Authenticator;
  maxWaitMs?: number;
  logger?: Logger;
  /** Answer GET /v1/cluster as the one node of group `group`, owning every partition (a cluster's client connects). */
  group?: string;
}

/** A real HTTP server over `local`, on a free loopback port; close() it after. */
export async function serve(local: RunQueue, options: ServeOptions = {}): Promise<RunningServer> {
  const self = { node: 'only', url: '' };
  const group = options.group;
  const cluster = {
    describe: () => {
      const partitions = local.partitions;
      return { group: group!, generation: 1, partitions, self, members: [self], owners: Array<string>(partitions).fill(self.url) };
    },
  };
  const server = await startServer({
    queue: local,
    log: local.log,
    authenticator: options.authenticator ?? openAuthenticator(),
    logger: options.logger ?? quietLogger,
    host: '127.0.0.1',
    port: 0,
    maxInputBytes: local.maxInputBytes,
    ...(options.maxWaitMs === undefined ? {} : { maxWaitMs: options.maxWaitMs }),
    ...(group === undefined ? {} : { cluster }),
  });
  self.url = server.url;
  return server;
}

/**
 * Waits until the client's work stream is open. Its opening calls the listeners once (a signal
 * sent before it was open would be lost otherwise): a worker started before that would get a
 * wake-up the suites do not expect (after a test moved the clock past a lease, say, it would take
 * the entry again). A worker process meets it once, at its start; the suites start after it.
 */
async function workStreamOpen(client: RemoteQueue): Promise<void> {
  await new Promise<void>((resolve) => {
    const stop = client.onWork(() => {
      stop();
      resolve();
    });
  });
}

/**
 * The transport: a server over the queue, and a client of it (its work stream open) whose
 * now() follows `clock`. With `group`, the server answers as the one node of a cluster, so
 * the cluster's client (routing, take rounds, merged answers) is what the suite calls.
 */
export function overHttp(options: Partial<ConnectOptions> = {}, group?: string): Transport {
  return async (local: RunQueue, clock: FakeClock) => {
    const server = await serve(local, group === undefined ? {} : { group });
    try {
      const client = await connect({ url: server.url, monotonicClock: clock.read, ...options });
      if ((client as { group?: string }).group !== group) throw new Error(`connect answered no client of group ${group}`);
      await workStreamOpen(client);
      return {
        queue: client,
        close: async () => {
          await client.stop();
          await server.close();
        },
      };
    } catch (error) {
      await server.close();
      throw error;
    }
  };
}
