/**
 * One HTTP exchange with a runlog server, over keep-alive connections (node:http's Agent with
 * keepAlive: a worker's many small calls reuse a few sockets). JSON in, JSON out (WIRE.md).
 *
 * What a call can end in:
 *   - a 2xx answer: its JSON;
 *   - a problem answer: the RunlogError it names (errorFromBody, shared with the server);
 *   - no answer: LogUnavailable (retriable) naming the url and why. Whether the request could
 *     have reached the server matters to the retry policy (retry-policy.ts): a connection
 *     that was never made (refused, no route, no such host) sent nothing, `wasNotSent`;
 *     a reset, a timeout or a closed socket after sending may have been served;
 *   - the caller's signal aborting: its reason; the client's stop: Stopped.
 * Every answer's `runlog-now` header feeds the ServerClock.
 */
import http, { type IncomingMessage } from 'node:http';
import https from 'node:https';
import { setMaxListeners } from 'node:events';
import { RunlogError } from '../errors.ts';
import { errorFromBody } from '../wire/index.ts';
import { NOW_HEADER, type ServerClock } from './server-clock.ts';

/** Connection failures that happen before a byte of the request is written: nothing reached the server. */
const NOT_SENT = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'EADDRNOTAVAIL']);
const notSent = new WeakSet<RunlogError>();

/** Whether `error` says the request never left this process (so repeating it cannot do anything twice). */
export function wasNotSent(error: unknown): boolean {
  return error instanceof RunlogError && notSent.has(error);
}

export interface RequestOptions {
  /** A JSON body (already checked and converted). */
  body?: unknown;
  /** Ends the request with the signal's reason. */
  signal?: AbortSignal | undefined;
  /** How long to wait for the whole answer, ms. */
  timeoutMs: number;
}

export interface HttpOptions {
  url: URL;
  token: string | undefined;
  /** Extra certificate authorities to trust (PEM), for a server with its own TLS certificate. */
  ca: string | undefined;
  clock: ServerClock;
}

export class Http {
  readonly #agent: http.Agent;
  readonly #stopping = new AbortController();

  constructor(private readonly options: HttpOptions) {
    const { url, ca } = options;
    // Every request in flight listens to it: as many as the caller's concurrency, not a leak.
    setMaxListeners(Infinity, this.#stopping.signal);
    this.#agent =
      url.protocol === 'https:' ? new https.Agent({ keepAlive: true, ...(ca ? { ca } : {}) }) : new http.Agent({ keepAlive: true });
  }

  /** Aborted by stop() (its reason: Stopped). */
  get stopping(): AbortSignal {
    return this.#stopping.signal;
  }

  /** Sends one request; resolves with the 2xx answer's JSON (see the top for the rest). */
  async request(method: string, path: string, options: RequestOptions): Promise<unknown> {
    const exchange = this.#open(method, path, options, 'application/json');
    try {
      const response = await exchange.response;
      const text = await exchange.read(response);
      const status = response.statusCode ?? 0;
      const body = parseJson(text);
      if (status >= 200 && status < 300 && body !== undefined) return body;
      throw errorFromBody(status, body ?? text);
    } finally {
      exchange.release();
    }
  }

  /**
   * Opens a long-lived GET (Server-Sent Events): resolves once its headers are in with status
   * 200 (a refusal is its RunlogError). The caller reads the response; `signal` ends it.
   */
  async stream(path: string, signal: AbortSignal): Promise<IncomingMessage> {
    const exchange = this.#open('GET', path, { signal, timeoutMs: 0 }, 'text/event-stream');
    const response = await exchange.response.catch((error: unknown) => {
      exchange.release();
      throw error;
    });
    response.once('close', exchange.release);
    if (response.statusCode === 200) return response;
    const text = await exchange.read(response);
    throw errorFromBody(response.statusCode ?? 0, parseJson(text) ?? text);
  }

  /** Ends every request and stream in flight with Stopped, and closes the kept-alive connections. */
  stop(): void {
    this.#stopping.abort(new RunlogError('Stopped', 'the client was stopped'));
    this.#agent.destroy();
  }

  /**
   * Starts one request. The first of these ends it, and is what it rejects with: the client's
   * stop (Stopped), the caller's signal (its reason), the timeout, or the connection's failure.
   */
  #open(method: string, path: string, options: RequestOptions, accept: string): Exchange {
    const { url, token, clock } = this.options;
    // The path goes out as built: a URL would resolve its dot segments, %2E%2E included, and
    // a tenant or thread named `..` would address another route. `target` is for messages.
    const rawPath = url.pathname.replace(/\/$/, '') + path;
    const target = new URL(rawPath, url);
    const payload = options.body === undefined ? undefined : Buffer.from(JSON.stringify(options.body), 'utf8');
    const headers: Record<string, string | number> = { accept };
    if (token !== undefined) headers.authorization = `Bearer ${token}`;
    if (payload !== undefined) Object.assign(headers, { 'content-type': 'application/json', 'content-length': payload.length });
    const request = (target.protocol === 'https:' ? https : http).request(target, { method, headers, agent: this.#agent, path: rawPath });
    let failure: unknown;
    const fail = (error: unknown): void => {
      failure ??= error;
      request.destroy(new Error('ended by the client'));
    };
    const { signal, timeoutMs } = options;
    const onStop = (): void => fail(this.#stopping.signal.reason);
    const onAbort = (): void => fail(signal!.reason);
    const timer = timeoutMs > 0 ? setTimeout(() => fail(unanswered(target, `no answer within ${timeoutMs} ms`)), timeoutMs) : undefined;
    this.#stopping.signal.addEventListener('abort', onStop, { once: true });
    signal?.addEventListener('abort', onAbort, { once: true });
    if (this.#stopping.signal.aborted) onStop();
    else if (signal?.aborted) onAbort();
    const response = new Promise<IncomingMessage>((resolve, reject) => {
      request.on('response', (answer) => {
        clock.observe(answer.headers[NOW_HEADER]);
        answer.on('error', () => {}); // read() reports it
        resolve(answer);
      });
      request.on('error', (error: NodeJS.ErrnoException) => {
        reject(failure ?? unanswered(target, error.message, error, NOT_SENT.has(error.code ?? '')));
      });
    });
    request.end(payload);
    const read = async (answer: IncomingMessage): Promise<string> => {
      const chunks: Buffer[] = [];
      try {
        for await (const chunk of answer) chunks.push(chunk as Buffer);
      } catch (error) {
        throw failure ?? unanswered(target, 'the answer was cut off', error);
      }
      if (failure !== undefined || !answer.complete) throw failure ?? unanswered(target, 'the answer was cut off');
      return Buffer.concat(chunks).toString('utf8');
    };
    const release = (): void => {
      clearTimeout(timer);
      this.#stopping.signal.removeEventListener('abort', onStop);
      signal?.removeEventListener('abort', onAbort);
    };
    return { response, read, release };
  }
}

interface Exchange {
  response: Promise<IncomingMessage>;
  /** The whole body as text. */
  read(response: IncomingMessage): Promise<string>;
  /** Stops listening to the signals and the timeout (once the exchange is over). */
  release(): void;
}

/** LogUnavailable for a request the server did not answer. */
function unanswered(target: URL, why: string, cause?: unknown, wasNotSentAtAll = false): RunlogError {
  const error = new RunlogError('LogUnavailable', `no answer from the runlog server at ${target.origin}${target.pathname}: ${why}`, {
    cause,
    retriable: true,
  });
  if (wasNotSentAtAll) notSent.add(error);
  return error;
}

function parseJson(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
