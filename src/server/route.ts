/**
 * What a route is: its method and path pattern, the roles that may call it, the schemas of its
 * body, query and answer (which validate requests and make the OpenAPI document), and its
 * handler. A JSON route's handler answers a value sent as JSON (or a Reply with another
 * status); a raw route writes its own response (Server-Sent Events, Prometheus text).
 */
import type { ServerResponse } from 'node:http';
import { Type, type Static, type TObject, type TSchema } from '@sinclair/typebox';
import type { ClusterDirectory } from './server-options.ts';
import type { EventLog } from '../log/event-log.ts';
import type { RunQueueApi } from '../queue/types.ts';
import { compileCheck, type Check } from '../wire/index.ts';
import type { PrometheusMetrics } from './prometheus.ts';
import type { Caller, Logger, Role } from './types.ts';

export type Method = 'GET' | 'POST' | 'DELETE';

/** Who may call a route: callers with one of these roles (admin may call every route), or anyone. */
export type Access = readonly Role[] | 'public';

/** What a handler is given. */
export interface RouteRequest<Body = unknown, Query = unknown> {
  readonly queue: RunQueueApi;
  /** The server's log, for routes that read it (the event stream); absent when the server was given none. */
  readonly log: EventLog | undefined;
  /** Who serves which partition (GET /v1/cluster): the cluster node's map, or this single server owning them all. */
  readonly cluster: ClusterDirectory;
  readonly caller: Caller;
  /** The path's {names}, decoded. */
  readonly params: Readonly<Record<string, string>>;
  readonly body: Body;
  readonly query: Query;
  /** Aborted when the client goes away or the server closes: a long wait ends, holding nothing. */
  readonly signal: AbortSignal;
  /** Aborted when the server closes (only): a long-poll then answers its "nothing" result. */
  readonly closing: AbortSignal;
  /** The longest a long-poll may wait, ms (the server's maxWaitMs). */
  readonly maxWaitMs: number;
  /** The server's Prometheus registry (GET /metrics). */
  readonly prometheus: PrometheusMetrics;
  readonly logger: Logger;
  readonly requestId: string;
}

/** A JSON answer with a status other than 200 (a readiness probe's 503). */
export class Reply {
  constructor(
    readonly status: number,
    readonly body: unknown,
  ) {}
}

interface RouteBase {
  readonly method: Method;
  /** `/v1/tenants/{tenant}/entries/{entryId}`: a {name} matches one non-empty path segment. */
  readonly path: string;
  readonly access: Access;
  readonly summary: string;
  /** The OpenAPI operationId, when the one derived from the method and path would clash (GET /metrics and GET /v1/metrics). */
  readonly operationId: string | undefined;
  readonly body: TSchema | undefined;
  readonly query: TObject;
  readonly checkBody: Check<TSchema> | undefined;
  readonly checkQuery: Check<TObject>;
}

export interface JsonRoute extends RouteBase {
  readonly kind: 'json';
  readonly answer: TSchema;
  handle(request: RouteRequest): Promise<unknown>;
}

export interface RawRoute extends RouteBase {
  readonly kind: 'raw';
  /** The content type it writes, for the OpenAPI document. */
  readonly contentType: string;
  serve(request: RouteRequest, response: ServerResponse): Promise<void>;
}

export type Route = JsonRoute | RawRoute;

/** A route's description and schemas: `body` and `query` validate requests; with `answer`, they make the OpenAPI document. */
interface Schemas<B extends TSchema | undefined, Q extends TObject> {
  summary: string;
  operationId?: string;
  body?: B;
  query?: Q;
}

type BodyOf<B> = B extends TSchema ? Static<B> : undefined;

/** No query parameters: any is refused as an unknown field. */
const NO_QUERY = Type.Object({}, { additionalProperties: false });

/** A JSON route; its schemas are compiled here, once. */
export function jsonRoute<A extends TSchema, B extends TSchema | undefined = undefined, Q extends TObject = typeof NO_QUERY>(
  method: Method,
  path: string,
  access: Access,
  schemas: Schemas<B, Q> & { answer: A },
  handle: (request: RouteRequest<BodyOf<B>, Static<Q>>) => Promise<Static<A> | Reply>,
): JsonRoute {
  return { kind: 'json', ...compiled(method, path, access, schemas), answer: schemas.answer, handle: handle as JsonRoute['handle'] };
}

/** A route that writes its own response (of `contentType`). */
export function rawRoute<B extends TSchema | undefined = undefined, Q extends TObject = typeof NO_QUERY>(
  method: Method,
  path: string,
  access: Access,
  schemas: Schemas<B, Q> & { contentType: string },
  serve: (request: RouteRequest<BodyOf<B>, Static<Q>>, response: ServerResponse) => Promise<void>,
): RawRoute {
  return { kind: 'raw', ...compiled(method, path, access, schemas), contentType: schemas.contentType, serve: serve as RawRoute['serve'] };
}

function compiled<B extends TSchema | undefined, Q extends TObject>(
  method: Method,
  path: string,
  access: Access,
  { summary, operationId, body, query = NO_QUERY as Q }: Schemas<B, Q>,
): RouteBase {
  return {
    method,
    path,
    access,
    summary,
    operationId,
    body,
    query,
    checkBody: body === undefined ? undefined : compileCheck(body, 'body'),
    checkQuery: compileCheck(query, 'query'),
  };
}
