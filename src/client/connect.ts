/**
 * `connect({ url, token })`: a RunQueueApi over HTTP, served by `runlog serve` (or
 * startServer). `new Worker(await connect(...))` runs as it does in process.
 *
 * connect reads the server's clock first (GET /v1/now): that proves the url and the token
 * (a wrong token is Unauthorized here, not at the first call) and gives now() its first
 * reading. stop() ends the client's calls and streams; it never stops the server.
 */
import { invalidArgument } from '../errors.ts';
import type { Clock } from '../queue/types.ts';
import { describe, optionalFunction, optionalOptions, requireInteger, requireObject, requireTimerMs } from '../validation/index.ts';
import { emitProcessWarning, type WarningListener } from '../warnings.ts';
import { Http } from './http.ts';
import { NodeQueue } from './node-queue.ts';
import type { RemoteQueue } from './remote-queue.ts';
import { DEFAULT_RETRY, type RetrySettings } from './retry-policy.ts';
import { ServerClock } from './server-clock.ts';
import { WorkSignal } from './work-signal.ts';

export interface ConnectOptions {
  /** The server's base url, `http://host:port` or `https://...`. */
  url: string | URL;
  /** The bearer token (left out: for a server without tokens, on loopback). */
  token?: string;
  /** The clock now() advances by between answers (default performance.now; tests pass the fake clock their server's queue reads). */
  monotonicClock?: Clock;
  /** How long to retry what may be retried (see README, The client), and the pauses between tries; `{ forMs: 0 }` never retries. */
  retry?: Partial<RetrySettings>;
  /** How long a call waits for its answer, beyond a long-poll's own wait, ms (default 30,000). */
  requestTimeoutMs?: number;
  /** Certificate authorities (PEM) to trust besides the system's, for a server with a certificate of its own. */
  ca?: string;
  /** Told of trouble the client works around (RUNLOG_WORK_STREAM; RUNLOG_LISTENER: an onWork listener threw). Default: process.emitWarning. */
  onWarning?: WarningListener;
}

const OPTION_KEYS = ['url', 'token', 'monotonicClock', 'retry', 'requestTimeoutMs', 'ca', 'onWarning'] as const;
/** Token characters: RFC 6750's b64token. */
const TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/;

export async function connect(options: ConnectOptions): Promise<RemoteQueue> {
  const body = requireObject('connect options', options, OPTION_KEYS);
  const url = serverUrl(body.url);
  const clock = new ServerClock(optionalFunction<Clock>('monotonicClock', body.monotonicClock) ?? (() => performance.now()));
  const http = new Http({ url, token: token(body.token), ca: certificates(body.ca), clock });
  const settings = {
    retry: retrySettings(body.retry),
    requestTimeoutMs: body.requestTimeoutMs === undefined ? 30_000 : requireTimerMs('requestTimeoutMs', body.requestTimeoutMs, 1),
  };
  const onWarning = optionalFunction<WarningListener>('onWarning', body.onWarning) ?? emitProcessWarning;
  const queue = new NodeQueue(url.href, http, clock, new WorkSignal(http, onWarning), settings);
  try {
    await queue.readNow();
  } catch (error) {
    await queue.stop();
    throw error;
  }
  return queue;
}

function serverUrl(value: unknown): URL {
  let url: URL | undefined;
  if (value instanceof URL) url = new URL(value.href);
  else if (typeof value === 'string' && URL.canParse(value)) url = new URL(value);
  if (url === undefined || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.search !== '' || url.hash !== '') {
    throw invalidArgument(`url must be an http: or https: url without query or fragment, got ${describe(value)}`);
  }
  if (url.username !== '' || url.password !== '') throw invalidArgument('url must not hold credentials: give the token as `token`');
  return url;
}

function token(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  // Never shown: a token is a secret, and a wrong one is often a real one of something else.
  if (typeof value !== 'string' || !TOKEN.test(value))
    throw invalidArgument(`token must be a bearer token (letters, digits, -._~+/ then =), got a ${typeof value}`);
  return value;
}

function certificates(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value === '') throw invalidArgument(`ca must be PEM text, got ${describe(value)}`);
  return value;
}

function retrySettings(value: unknown): RetrySettings {
  const body = optionalOptions('retry', value, ['forMs', 'firstMs', 'maxMs']);
  const setting = (name: 'forMs' | 'firstMs' | 'maxMs', min: number): number =>
    body[name] === undefined ? DEFAULT_RETRY[name] : requireInteger(`retry.${name}`, body[name], min, 2 ** 31 - 1);
  const settings = { forMs: setting('forMs', 0), firstMs: setting('firstMs', 1), maxMs: setting('maxMs', 1) };
  if (settings.maxMs < settings.firstMs)
    throw invalidArgument(`retry.maxMs must be at least retry.firstMs (${settings.firstMs}), got ${settings.maxMs}`);
  return settings;
}
