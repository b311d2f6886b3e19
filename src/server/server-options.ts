/** startServer's options, checked before anything listens: a bad one is InvalidArgument naming it. */
import { invalidArgument } from '../errors.ts';
import type { EventLog } from '../log/event-log.ts';
import type { RunQueueApi } from '../queue/types.ts';
import { MAX_WAIT_MS, type ClusterAnswer } from '../wire/index.ts';
import { describe, isUint8Array, requireInteger, requireName, requireObject } from '../validation/index.ts';
import type { Authenticator, Logger } from './types.ts';

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
  /** A cluster node's map of who serves which partition (GET /v1/cluster); absent: a single server owning every partition. */
  cluster?: ClusterDirectory;
}

/** What GET /v1/cluster answers on a cluster node (src/cluster keeps it from the group's assignments). */
export interface ClusterDirectory {
  describe(): ClusterAnswer | Promise<ClusterAnswer>;
  /** /readyz on a cluster node: joined, and every partition assigned to it serves (absent: every partition serves). */
  ready?(): boolean | Promise<boolean>;
}

const KEYS = ['queue', 'log', 'authenticator', 'logger', 'host', 'port', 'tls', 'maxInputBytes', 'maxWaitMs', 'cluster'] as const;

export function checkServerOptions(
  options: ServerOptions,
): Required<Omit<ServerOptions, 'log' | 'tls' | 'cluster'>> & Pick<ServerOptions, 'log' | 'tls' | 'cluster'> {
  const body = requireObject('server options', options, KEYS);
  return {
    queue: withMethods<RunQueueApi>('queue', body.queue, ['submit', 'take', 'onWork', 'now', 'health']),
    log: body.log === undefined ? undefined : withMethods<EventLog>('log', body.log, ['read', 'endOffset']),
    authenticator: withMethods<Authenticator>('authenticator', body.authenticator, ['authenticate']),
    logger: withMethods<Logger>('logger', body.logger, ['log']),
    host: requireName('host', body.host),
    port: requireInteger('port', body.port, 0, 65_535),
    tls: body.tls === undefined ? undefined : tlsOf(body.tls),
    maxInputBytes: requireInteger('maxInputBytes', body.maxInputBytes, 1),
    maxWaitMs: requireInteger('maxWaitMs', body.maxWaitMs ?? MAX_WAIT_MS, 0, MAX_WAIT_MS),
    cluster: body.cluster === undefined ? undefined : withMethods<ClusterDirectory>('cluster', body.cluster, ['describe']),
  };
}

/** An object with these methods (an interface the server is given: a queue, a logger, ...). */
function withMethods<T>(name: string, value: unknown, methods: readonly string[]): T {
  const missing = methods.find((method) => typeof (value as Record<string, unknown> | null)?.[method] !== 'function');
  if (typeof value !== 'object' || value === null || missing !== undefined) {
    throw invalidArgument(`${name} must be an object with methods ${methods.join(', ')}, got ${describe(value)}`);
  }
  return value as T;
}

function tlsOf(value: unknown): { cert: string | Buffer; key: string | Buffer } {
  const { cert, key } = requireObject('tls', value, ['cert', 'key']);
  return { cert: pem('tls.cert', cert), key: pem('tls.key', key) };
}

function pem(name: string, value: unknown): string | Buffer {
  if ((typeof value === 'string' && value.length > 0) || (isUint8Array(value) && value.length > 0)) return value as string | Buffer;
  throw invalidArgument(`${name} must be PEM text (a non-empty string or Buffer), got ${describe(value)}`);
}
