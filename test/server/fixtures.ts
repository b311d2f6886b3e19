/** A real server on 127.0.0.1 (a free port) over a RunQueue on a memory log with a fake store clock, and a plain-fetch caller. */
import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import { openMemoryLog } from '../../src/log/memory/memory-log.ts';
import type { RunQueue } from '../../src/queue/run-queue.ts';
import type { Capacity, RunQueueApi } from '../../src/queue/types.ts';
import { openAuthenticator } from '../../src/server/auth.ts';
import { startServer, type RunningServer } from '../../src/server/start-server.ts';
import type { Authenticator, LogLevel, Logger } from '../../src/server/types.ts';
import { onCleanup } from '../support/cleanup.ts';
import { queueOn, type OpenLog, type QueueFixture } from '../contract/fixtures.ts';

export interface LogLine {
  level: LogLevel;
  event: string;
  fields: Record<string, unknown>;
}

/** A Logger that keeps its lines, for tests to read. */
export class RecordingLogger implements Logger {
  readonly lines: LogLine[] = [];
  log(level: LogLevel, event: string, fields: Record<string, unknown> = {}): void {
    this.lines.push({ level, event, fields });
  }
}

export interface ServerFixture extends QueueFixture {
  server: RunningServer;
  logger: RecordingLogger;
  call: Caller;
}

export interface ServerFixtureOptions {
  authenticator?: Authenticator;
  partitions?: number;
  capacity?: Capacity;
  maxInputBytes?: number;
  maxWaitMs?: number;
  /** The log the queue opens on (default: a memory log). */
  openLog?: OpenLog;
  /** What the server is given instead of the queue itself (the queue, some methods wrapped). */
  wrap?: (queue: RunQueue) => RunQueueApi;
}

/** The real queue with some methods replaced (each replacement may call the queue's own): a probe or a fault. */
export function wrapQueue(queue: RunQueue, replace: Partial<RunQueueApi>): RunQueueApi {
  return new Proxy(queue, {
    get(target, key) {
      if (Object.hasOwn(replace, key)) return replace[key as keyof RunQueueApi];
      const value: unknown = Reflect.get(target, key, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

/** A probe: resolves `next()` at the next call of the queue's `method` (called through). */
export function callsOf<K extends 'nextDueAt' | 'awaitClosed' | 'take'>(queue: RunQueue, method: K) {
  let waiters: (() => void)[] = [];
  const original = queue[method].bind(queue) as (...args: unknown[]) => unknown;
  const replacement = (...args: unknown[]) => {
    const woken = waiters;
    waiters = [];
    for (const wake of woken) wake();
    return original(...args);
  };
  return {
    queue: wrapQueue(queue, { [method]: replacement }),
    next: () => new Promise<void>((resolve) => waiters.push(resolve)),
  };
}

export async function serverOn(t: TestContext, options: ServerFixtureOptions = {}): Promise<ServerFixture> {
  const openLog = options.openLog ?? ((partitions: number) => openMemoryLog({ partitions }));
  const fixture = await queueOn({ openLog }, t, {
    partitions: options.partitions ?? 2,
    ...(options.capacity ? { capacity: options.capacity } : {}),
    ...(options.maxInputBytes ? { maxInputBytes: options.maxInputBytes } : {}),
  });
  const logger = new RecordingLogger();
  const server = await startServer({
    queue: options.wrap ? options.wrap(fixture.local) : fixture.local,
    log: fixture.log,
    authenticator: options.authenticator ?? openAuthenticator(),
    logger,
    host: '127.0.0.1',
    port: 0,
    maxInputBytes: fixture.local.maxInputBytes,
    ...(options.maxWaitMs === undefined ? {} : { maxWaitMs: options.maxWaitMs }),
  });
  onCleanup(t, () => server.close());
  return { ...fixture, server, logger, call: caller(server.url) };
}

export interface Answer {
  status: number;
  headers: Headers;
  /** The parsed JSON body (undefined when the body was empty). */
  body: any;
}

export interface CallOptions {
  body?: unknown;
  /** A body sent as is (not JSON-encoded). */
  raw?: string | Uint8Array;
  token?: string;
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

export type Caller = (method: string, path: string, options?: CallOptions) => Promise<Answer>;

/** Calls the server with plain fetch: JSON bodies with content-type application/json. */
export function caller(url: string): Caller {
  return async (method, path, options = {}) => {
    const headers: Record<string, string> = { ...options.headers };
    if (options.body !== undefined) headers['content-type'] ??= 'application/json';
    if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;
    const body = options.raw ?? (options.body === undefined ? undefined : JSON.stringify(options.body));
    const response = await fetch(`${url}${path}`, { method, headers, body, ...(options.signal ? { signal: options.signal } : {}) });
    const text = await response.text();
    return { status: response.status, headers: response.headers, body: text === '' ? undefined : JSON.parse(text) };
  };
}

/** Asserts a problem answer: status, code, content type, and a message matching `message`. */
export function assertProblem(answer: Answer, status: number, code: string, message?: RegExp): void {
  assert.equal(answer.status, status, `status of ${JSON.stringify(answer.body)}`);
  assert.equal(answer.headers.get('content-type'), 'application/problem+json');
  assert.equal(answer.body.code, code, JSON.stringify(answer.body));
  assert.equal(answer.body.status, status);
  assert.equal(answer.body.type, `urn:runlog:error:${code}`);
  assert.equal(answer.body.title, code);
  assert.equal(typeof answer.body.retriable, 'boolean');
  if (message) assert.match(answer.body.message, message);
}

export const SUBMIT = { tenant: 'acme', thread: 'order-1', agent: 'billing', inputText: 'hello' };
export const TAKE = { agents: ['billing'], holder: 'w1', ttlMs: 30_000 };
