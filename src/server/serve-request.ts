/**
 * One request, start to end: find its route (404, 405), authenticate and check its role
 * (401, 403) before reading anything, read and check its query and body against the route's
 * schemas (400, 413, 415), run the handler, answer JSON or a problem body with the store
 * clock's `runlog-now`, and log one line (5xx also at error, with the stack).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import { RunlogError, invalidArgument } from '../errors.ts';
import { describe } from '../describe.ts';
import type { EventLog } from '../log/event-log.ts';
import type { RunQueueApi } from '../queue/types.ts';
import { HttpRefusal } from './http-refusal.ts';
import { queryOf, readJsonBody } from './read-request.ts';
import { NOW_HEADER, REQUEST_ID_HEADER, asRunlogError, sendJson, sendProblem } from './respond.ts';
import { Reply, type Route, type RouteRequest } from './route.ts';
import type { Router } from './router.ts';
import type { PrometheusMetrics } from './prometheus.ts';
import { forbiddenRoute, mayCall } from './scope.ts';
import type { Authenticator, Caller, Logger } from './types.ts';
import type { ClusterDirectory } from './server-options.ts';

export interface ServerContext {
  readonly queue: RunQueueApi;
  readonly log: EventLog | undefined;
  readonly authenticator: Authenticator;
  readonly logger: Logger;
  readonly router: Router;
  readonly bodyLimit: number;
  readonly maxWaitMs: number;
  /** GET /metrics's registry; every answered request is recorded in it. */
  readonly prometheus: PrometheusMetrics;
  /** Aborted when the server closes. */
  readonly closing: AbortSignal;
  /** Who serves which partition (GET /v1/cluster). */
  readonly cluster: ClusterDirectory;
}

/** Who calls a public route: nobody in particular, with no role and no tenant. */
const PUBLIC: Caller = { name: 'public', roles: new Set(), tenants: new Set() };

export async function serveRequest(context: ServerContext, request: IncomingMessage, response: ServerResponse): Promise<void> {
  const started = performance.now();
  const requestId = randomUUID();
  let url: URL | undefined;
  let caller: Caller | undefined;
  let routePath = 'unmatched';
  response.setHeader(REQUEST_ID_HEADER, requestId);
  try {
    url = targetOf(request.url);
    const { route, params } = routeOf(context.router, request.method ?? '', pathOf(request.url, url));
    routePath = route.path;
    caller = route.access === 'public' ? PUBLIC : authorize(context.authenticator, route, request.headers.authorization);
    if (context.closing.aborted) throw new RunlogError('Stopped', 'the server is shutting down');
    const query = route.checkQuery(queryOf(url.searchParams, route.query));
    const body = route.checkBody?.(await readJsonBody(request, context.bodyLimit));
    await answer(context, route, { ...requestOf(context, response, requestId), caller, params, query, body }, response);
  } catch (error) {
    const refusal = asRunlogError(error, requestId);
    if (refusal !== error) context.logger.log('error', 'http.internal', { requestId, error: describeError(error) });
    stamp(context, response);
    sendProblem(response, refusal);
    if (error instanceof HttpRefusal && error.status === 413) response.once('finish', () => request.destroy());
  } finally {
    logRequest(context.logger, { request, response, url, caller, requestId, started });
    const seconds = (performance.now() - started) / 1000;
    context.prometheus.recordRequest({ route: routePath, method: request.method ?? '', status: response.statusCode, seconds });
  }
}

/** The request target as a URL (its path and query); one that is none is InvalidArgument. */
function targetOf(target: string | undefined): URL {
  try {
    return new URL(target ?? '/', 'http://runlog.invalid');
  } catch {
    throw invalidArgument(`the request target ${describe(target)} is not a valid path`);
  }
}

/**
 * The path to route by, as the client sent it: URL parsing would resolve dot segments
 * (`/v1/tenants/../entries` and even `%2E%2E`), so a tenant, thread or entry named `.` or
 * `..` could not be addressed. An origin-form target (`/v1/...`, what clients send) is cut
 * at its query; any other form falls back to the parsed URL's path.
 */
function pathOf(target: string | undefined, url: URL): string {
  if (target === undefined || !target.startsWith('/')) return url.pathname;
  return target.split(/[?#]/, 1)[0]!;
}

function routeOf(router: Router, method: string, path: string): { route: Route; params: Record<string, string> } {
  const match = router.match(method, path);
  if ('route' in match) return match;
  if ('allow' in match) {
    throw new HttpRefusal(405, `${describe(method)} is not a method of ${path}: it takes ${match.allow.join(', ')}`, {
      allow: match.allow.join(', '),
    });
  }
  throw new HttpRefusal(404, `no route for ${method} ${describe(path)} (see /openapi.json)`);
}

function authorize(authenticator: Authenticator, route: Route, authorization: string | undefined): Caller {
  const caller = authenticator.authenticate(authorization);
  if (!mayCall(caller, route.access)) throw forbiddenRoute(caller, route.access, route.summary);
  return caller;
}

/**
 * What every request gives its handler, besides its caller, params, query and body. Its
 * signal aborts when the server closes, or when the response closes unfinished (the client
 * went away); the listener on the server's closing signal goes with the response.
 */
function requestOf(context: ServerContext, response: ServerResponse, requestId: string) {
  const ended = new AbortController();
  const onClosing = (): void => ended.abort(context.closing.reason);
  context.closing.addEventListener('abort', onClosing, { once: true });
  response.once('close', () => {
    context.closing.removeEventListener('abort', onClosing);
    if (!response.writableFinished) ended.abort(new Error('the client went away'));
  });
  return {
    queue: context.queue,
    log: context.log,
    cluster: context.cluster,
    signal: ended.signal,
    closing: context.closing,
    maxWaitMs: context.maxWaitMs,
    prometheus: context.prometheus,
    logger: context.logger,
    requestId,
  };
}

async function answer(context: ServerContext, route: Route, routeRequest: RouteRequest, response: ServerResponse): Promise<void> {
  if (route.kind === 'raw') {
    stamp(context, response);
    return route.serve(routeRequest, response);
  }
  const result = await route.handle(routeRequest);
  stamp(context, response);
  if (result instanceof Reply) sendJson(response, result.status, result.body);
  else sendJson(response, 200, result);
}

/** The store clock when the answer is made; `connection: close` once the server is closing. */
function stamp(context: ServerContext, response: ServerResponse): void {
  if (response.headersSent) return;
  if (context.closing.aborted) response.setHeader('connection', 'close');
  try {
    response.setHeader(NOW_HEADER, String(context.queue.now()));
  } catch {
    // A clock that fails fails the command too, which says why; the answer goes without the header.
  }
}

interface Finished {
  request: IncomingMessage;
  response: ServerResponse;
  url: URL | undefined;
  caller: Caller | undefined;
  requestId: string;
  started: number;
}

function logRequest(logger: Logger, { request, response, url, caller, requestId, started }: Finished): void {
  const fields = {
    method: request.method,
    path: url?.pathname ?? request.url,
    status: response.statusCode,
    ms: Math.round((performance.now() - started) * 10) / 10,
    caller: caller?.name ?? null,
    requestId,
  };
  logger.log('debug', 'http.request', fields);
  if (response.statusCode >= 500) logger.log('error', 'http.error', fields);
}

function describeError(error: unknown): string {
  return error instanceof Error ? (error.stack ?? `${error.name}: ${error.message}`) : describe(error);
}
