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
import type { EventLog } from '../log/event-log.ts';
import type { RunQueueApi } from '../queue/types.ts';
import { MAX_WAIT_MS } from '../wire/index.ts';
import { bodyLimitOf } from './read-request.ts';
import { PrometheusMetrics } from './prometheus.ts';
import { Router } from './router.ts';
import { ROUTES } from './routes.ts';
import { serveRequest, type ServerContext } from './serve-request.ts';
import type { Authenticator, Logger } from './types.ts';
import { requireInteger } from '../validation/index.ts';

export interface ServerOptions {
  queue: RunQueueApi;
  /** The queue's log, for routes that read it (the event stream). */
  log?: EventLog;
  authenticator: Authenticator;
  logger: Logger;
  host: string;
  /** 0: a free port. */
  port: number;
  /** PEM certificate and key: serve HTTPS. */
  tls?: { cert: string | Buffer; key: string | Buffer };
  /** The queue's largest input (its maxInputBytes): the body limit is derived from it. */
  maxInputBytes: number;
  /** The longest a long-poll waits, ms (default and at most 60,000). */
  maxWaitMs?: number;
}

export interface RunningServer {
  /** `http://host:port` (https with tls). */
  readonly url: string;
  readonly port: number;
  /** Graceful: stop accepting, end long-polls with their "nothing" answers, answer requests in flight, then resolve. */
  close(): Promise<void>;
}

export async function startServer(options: ServerOptions): Promise<RunningServer> {
  const closing = new AbortController();
  setMaxListeners(0, closing.signal); // one listener per request in flight: no limit to warn of
  const context: ServerContext = {
    queue: options.queue,
    log: options.log,
    authenticator: options.authenticator,
    logger: options.logger,
    router: new Router(ROUTES),
    bodyLimit: bodyLimitOf(requireInteger('maxInputBytes', options.maxInputBytes, 0)),
    maxWaitMs: requireInteger('maxWaitMs', options.maxWaitMs ?? MAX_WAIT_MS, 0, MAX_WAIT_MS),
    prometheus: new PrometheusMetrics(options.queue),
    closing: closing.signal,
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
  const port = await listen(server, options.host, requireInteger('port', options.port, 0, 65_535));
  const url = `${options.tls ? 'https' : 'http'}://${hostInUrl(options.host)}:${port}`;
  let closed: Promise<void> | undefined;
  return { url, port, close: () => (closed ??= shutDown(server, closing, inFlight)) };
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
