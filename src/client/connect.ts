/**
 * `connect({ url, token })`: a RunQueueApi over HTTP, served by `runlog serve` (or
 * startServer). `new Worker(await connect(...))` runs as it does in process.
 *
 * connect reads the server's clock first (GET /v1/now): that proves the url and the token
 * (a wrong token is Unauthorized here, not at the first call) and gives now() its first
 * reading. Then who serves which partition (GET /v1/cluster): a single server serves them
 * all, a cluster node names its group and the owner of each (cluster-queue.ts). stop() ends
 * the client's calls and streams; it never stops the server.
 */
import { RunlogError, invalidArgument } from '../errors.ts';
import type { Clock } from '../queue/types.ts';
import { Backoff } from '../retry.ts';
import {
  describe,
  isArray,
  optionalFunction,
  optionalOptions,
  readArray,
  requireInteger,
  requireObject,
  requireTimerMs,
} from '../validation/index.ts';
import { MAX_WAIT_MS } from '../wire/index.ts';
import { emitProcessWarning, type WarningListener } from '../warnings.ts';
import { ClusterMap, clusterState, type ClusterState } from './cluster-map.ts';
import { ClusterNodes } from './cluster-nodes.ts';
import { ClusterQueue } from './cluster-queue.ts';
import { Http } from './http.ts';
import { NodeQueue } from './node-queue.ts';
import type { RemoteQueue } from './remote-queue.ts';
import { DEFAULT_RETRY, mayRetry, type RetrySettings } from './retry-policy.ts';
import { ServerClock } from './server-clock.ts';
import { WorkSignal } from './work-signal.ts';

export interface ConnectOptions {
  /**
   * The server's base url, `http://host:port` or `https://...`; of a cluster, any node's, or
   * a list of nodes' (the first that answers gives the map, which names the rest).
   */
  url: string | URL | readonly (string | URL)[];
  /** The bearer token (left out: for a server without tokens, on loopback). Of a cluster: every node's. */
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
  /** Of a cluster: how often the map of who serves which partition is read again, ms (default 2,000; it is also read after every refusal). */
  mapRefreshMs?: number;
}

const OPTION_KEYS = ['url', 'token', 'monotonicClock', 'retry', 'requestTimeoutMs', 'ca', 'onWarning', 'mapRefreshMs'] as const;
/** Token characters: RFC 6750's b64token. */
const TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/;
/** The most urls connect takes: a list names some nodes of one cluster, not a directory. */
const MAX_URLS = 64;
const NO_RETRY: RetrySettings = { forMs: 0, firstMs: 1, maxMs: 1 };

/**
 * Connects to the first of the urls that answers (GET /v1/now, then GET /v1/cluster), trying
 * them in turn with pauses while the retry settings allow. A single server (group null): its
 * client (node-queue.ts). A cluster node: the cluster's client (cluster-queue.ts), which
 * routes each call to its partition's owner by the map that node answered.
 */
export async function connect(options: ConnectOptions): Promise<RemoteQueue> {
  const body = requireObject('connect options', options, OPTION_KEYS);
  const urls = serverUrls(body.url);
  const clock = new ServerClock(optionalFunction<Clock>('monotonicClock', body.monotonicClock) ?? (() => performance.now()));
  const access = { token: token(body.token), ca: certificates(body.ca), clock };
  const retry = retrySettings(body.retry);
  const requestTimeoutMs = body.requestTimeoutMs === undefined ? 30_000 : requireTimerMs('requestTimeoutMs', body.requestTimeoutMs, 1);
  const onWarning = optionalFunction<WarningListener>('onWarning', body.onWarning) ?? emitProcessWarning;
  const mapRefreshMs = body.mapRefreshMs === undefined ? 2_000 : requireTimerMs('mapRefreshMs', body.mapRefreshMs, 1);
  const open = (url: string, retrying: RetrySettings): NodeQueue => {
    const http = new Http({ url: new URL(url), ...access });
    return new NodeQueue(url, http, clock, new WorkSignal(http, onWarning), { retry: retrying, requestTimeoutMs });
  };
  if (urls.length === 1) {
    // One url: as before clusters, the server's own client, retrying as the settings say; it is a cluster's client if the server is a node.
    const node = open(urls[0]!, retry);
    const state = await firstAnswer(node, access.token !== undefined);
    if (state.group === null) return node;
    await node.stop();
    return clusterClient(node.url, state, { open, retry, requestTimeoutMs, mapRefreshMs, onWarning, clock });
  }
  const { url, state } = await firstOf(urls, open, retry, access.token !== undefined);
  if (state.group === null) return open(url, retry);
  return clusterClient(url, state, { open, retry, requestTimeoutMs, mapRefreshMs, onWarning, clock });
}

interface ClusterParts {
  open(url: string, retry: RetrySettings): NodeQueue;
  retry: RetrySettings;
  requestTimeoutMs: number;
  mapRefreshMs: number;
  onWarning: WarningListener;
  clock: ServerClock;
}

function clusterClient(url: string, state: ClusterState, parts: ClusterParts): ClusterQueue {
  const { open, retry, requestTimeoutMs, mapRefreshMs, onWarning, clock } = parts;
  // A node let go keeps its connections while a call on it may still be answered: the longest long-poll and its timeout.
  const nodes = new ClusterNodes((node) => open(node, NO_RETRY), onWarning, MAX_WAIT_MS + requestTimeoutMs);
  // A generation no node has answered for five reads is taken for gone (the group started again).
  const map = new ClusterMap(state, { clock: () => performance.now(), staleMs: 5 * mapRefreshMs });
  return new ClusterQueue(url, map, nodes, clock, { retry, mapRefreshMs });
}

/** The server's clock (proving the url and the token) and its map; the node is stopped if it fails. */
async function firstAnswer(node: NodeQueue, hasToken: boolean): Promise<ClusterState> {
  try {
    await node.readNow();
    return clusterState(await node.cluster(), node.url);
  } catch (error) {
    await node.stop();
    throw error instanceof RunlogError && error.code === 'Unauthorized' ? refusedAccess(error, node.url, hasToken) : error;
  }
}

/** The server's Unauthorized, saying what connect was given: no token, or one the server refused (never the token itself). */
function refusedAccess(error: RunlogError, url: string, hasToken: boolean): RunlogError {
  const given = hasToken ? 'the token given was refused' : "no token was given (connect's `token` option)";
  return new RunlogError('Unauthorized', `${url}: ${error.message}: ${given}`, { cause: error });
}

/** The first of `urls` that answers, each tried once a round, rounds paused and repeated as `retry` allows. */
async function firstOf(
  urls: readonly string[],
  open: (url: string, retry: RetrySettings) => NodeQueue,
  retry: RetrySettings,
  hasToken: boolean,
): Promise<{ url: string; state: ClusterState }> {
  const pauses = new Backoff({ ...retry, retriable: (error) => mayRetry(error, 'repeatable') });
  for (;;) {
    let failure: unknown;
    for (const url of urls) {
      const node = open(url, NO_RETRY);
      try {
        const state = await firstAnswer(node, hasToken);
        await node.stop();
        return { url, state };
      } catch (error) {
        if (!mayRetry(error, 'repeatable')) throw error;
        failure = error;
      }
    }
    try {
      await pauses.after(failure);
    } catch {
      throw new RunlogError('LogUnavailable', `no runlog server answered at ${urls.join(', ')}: ${describe(failure)}`, {
        cause: failure,
        retriable: true,
      });
    }
  }
}

/** The url option: one url, or a list of 1 to 64 different ones; each as URL.href. */
function serverUrls(value: unknown): string[] {
  if (!isArray(value)) return [serverUrl(value).href];
  const list = readArray('url', value);
  if (list.length === 0 || list.length > MAX_URLS)
    throw invalidArgument(`url must be a url or a list of 1 to ${MAX_URLS} urls, got a list of ${list.length}`);
  const urls = list.map((url, i) => serverUrl(url, `url[${i}]`).href);
  const twice = urls.find((url, i) => urls.indexOf(url) !== i);
  if (twice !== undefined) throw invalidArgument(`url lists ${describe(twice)} twice`);
  return urls;
}

function serverUrl(value: unknown, name = 'url'): URL {
  let url: URL | undefined;
  if (value instanceof URL) url = new URL(value.href);
  else if (typeof value === 'string' && URL.canParse(value)) url = new URL(value);
  if (url === undefined || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.search !== '' || url.hash !== '') {
    throw invalidArgument(`${name} must be an http: or https: url without query or fragment, got ${describe(value)}`);
  }
  if (url.username !== '' || url.password !== '') throw invalidArgument(`${name} must not hold credentials: give the token as \`token\``);
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
