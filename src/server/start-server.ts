/**
 * `startServer`: the HTTP API over one RunQueueApi (the node's own partitions; a cluster of
 * nodes would slot in behind the same interface), on node:http, or node:https with `tls`.
 *
 * Shutdown (close()): stop accepting connections and close the idle ones; abort the closing
 * signal, so long-polls answer their "nothing" results (`{ taken: null }`, `{ entry: null }`)
 * and streams end; requests still arriving on open connections are refused (Stopped); wait
 * for every request in flight to be answered; then close the remaining connections. The
 * queue is the caller's: close() never stops it.
 */
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { setMaxListeners } from 'node:events';
import type { AddressInfo } from 'node:net';
import { bodyLimitOf } from './read-request.ts';
import { PrometheusMetrics } from './prometheus.ts';
import { Router } from './router.ts';
import { ROUTES } from './routes.ts';
import { serveRequest, type ServerContext } from './serve-request.ts';
import { checkServerOptions, type ClusterDirectory, type ServerOptions } from './server-options.ts';
import type { RunQueueApi } from '../queue/types.ts';
import type { ClusterAnswer } from '../wire/index.ts';

export type { ServerOptions };

export interface RunningServer {
  /** `http://host:port` (https with tls). */
  readonly url: string;
  readonly port: number;
  /** Graceful: stop accepting, end long-polls with their "nothing" answers, answer requests in flight, then resolve. */
  close(): Promise<void>;
}

export async function startServer(given: ServerOptions): Promise<RunningServer> {
  const options = checkServerOptions(given);
  const closing = new AbortController();
  setMaxListeners(0, closing.signal); // one listener per request in flight: no limit to warn of
  const self = { url: '' }; // known once listening
  const context: ServerContext = {
    queue: options.queue,
    log: options.log,
    authenticator: options.authenticator,
    logger: options.logger,
    router: new Router(ROUTES),
    bodyLimit: bodyLimitOf(options.maxInputBytes),
    maxWaitMs: options.maxWaitMs,
    prometheus: new PrometheusMetrics(options.queue),
    closing: closing.signal,
    cluster: options.cluster ?? singleServer(options.queue, self),
  };
  const inFlight = new Set<Promise<void>>();
  const handler = (request: IncomingMessage, response: ServerResponse): void => {
    const served = serveRequest(context, request, response)
      // serveRequest answers every failure itself; one that escapes it (a logger that throws) must not end the process.
      .catch((error: unknown) => {
        response.destroy();
        try {
          options.logger.log('error', 'http.unexpected', { error: error instanceof Error ? error.stack : String(error) });
        } catch {
          // The logger itself failed: nothing is left to tell.
        }
      })
      .finally(() => inFlight.delete(served));
    inFlight.add(served);
  };
  const server = options.tls ? createHttpsServer({ cert: options.tls.cert, key: options.tls.key }, handler) : createHttpServer(handler);
  const port = await listen(server, options.host, options.port);
  const url = `${options.tls ? 'https' : 'http'}://${hostInUrl(options.host)}:${port}`;
  self.url = url;
  let closed: Promise<void> | undefined;
  return { url, port, close: () => (closed ??= shutDown(server, closing, inFlight)) };
}

/** A server that is no cluster node: not in a group, owning every partition of its queue. */
function singleServer(queue: RunQueueApi, self: { url: string }): ClusterDirectory {
  return {
    async describe(): Promise<ClusterAnswer> {
      const partitions = (await queue.health()).length;
      const node = { node: 'single', url: self.url };
      return {
        group: null,
        generation: 0,
        partitions,
        self: node,
        members: [node],
        owners: Array.from({ length: partitions }, () => self.url),
      };
    },
  };
}

function listen(server: Server, host: string, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

async function shutDown(server: Server, closing: AbortController, inFlight: Set<Promise<void>>): Promise<void> {
  const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  closing.abort();
  while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
  server.closeAllConnections();
  await stopped;
}

/** An IPv6 address goes in brackets in a URL. */
function hostInUrl(host: string): string {
  return host.includes(':') ? `[${host}]` : host;
}
