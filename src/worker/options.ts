/** Worker options: defaults, and InvalidArgument naming any bad value. */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { callListener } from '../call-listener.ts';
import { invalidArgument } from '../errors.ts';
import {
  describe,
  MAX_TIMER_MS,
  orDefault,
  requireFunction,
  requireInteger,
  requireName,
  requireNames,
  requireObject,
  requireTimerMs,
} from '../validation/index.ts';
import { defaultBackoff } from './backoff.ts';
import { stderrLogger } from './report.ts';
import { realTimers } from './timers.ts';
import type { Timers, WorkerEvent, WorkerLogRecord } from './types.ts';

export const DEFAULT_CONCURRENCY = 4;
export const DEFAULT_LEASE_MS = 2 * 60 * 1000;
export const DEFAULT_POLL_MS = 1000;
export const DEFAULT_GRACE_MS = 10_000;
export const DEFAULT_PERIODIC_TENANT = 'runlog';

export interface ResolvedOptions {
  concurrency: number;
  leaseMs: number;
  pollMs: number;
  maxAttempts: number | null;
  backoff: (attempt: number) => number;
  holder: string;
  graceMs: number;
  periodicTenant: string;
  /** Takes only entries of these tenants (undefined: of any tenant). */
  tenants: readonly string[] | undefined;
  timers: Timers;
  onEvent: (event: WorkerEvent) => void;
  logger: (record: WorkerLogRecord) => void;
}

const OPTION_KEYS = [
  'concurrency',
  'leaseMs',
  'pollMs',
  'maxAttempts',
  'backoff',
  'holder',
  'graceMs',
  'periodicTenant',
  'tenants',
  'timers',
  'onEvent',
  'logger',
] as const;
const DAY_MS = 24 * 3600 * 1000;

/** Reads the options once and checks every value; timer durations stay within what a Node timer can wait (MAX_TIMER_MS). */
export function resolveOptions(options: unknown = {}): ResolvedOptions {
  const body = requireObject('worker options', options, OPTION_KEYS);
  return {
    concurrency: requireInteger('concurrency', orDefault(body.concurrency, DEFAULT_CONCURRENCY), 1, 10_000),
    // Renewed every half lease by a timer.
    leaseMs: requireInteger('leaseMs', orDefault(body.leaseMs, DEFAULT_LEASE_MS), 2, MAX_TIMER_MS),
    pollMs: requireInteger('pollMs', orDefault(body.pollMs, DEFAULT_POLL_MS), 1, DAY_MS),
    maxAttempts: body.maxAttempts === undefined ? null : requireInteger('maxAttempts', body.maxAttempts, 1, 2 ** 31 - 1),
    backoff: requireFunction('backoff', orDefault(body.backoff, defaultBackoff)),
    holder: body.holder === undefined ? defaultHolder() : requireName('holder', body.holder),
    graceMs: requireTimerMs('graceMs', orDefault(body.graceMs, DEFAULT_GRACE_MS), 0),
    periodicTenant: requireName('periodicTenant', orDefault(body.periodicTenant, DEFAULT_PERIODIC_TENANT)),
    tenants: body.tenants === undefined ? undefined : requireNames('tenants', body.tenants),
    timers: requireTimers(orDefault(body.timers, realTimers)),
    onEvent: guarded(
      requireFunction(
        'onEvent',
        orDefault(body.onEvent, () => {}),
      ),
    ),
    logger: requireFunction('logger', orDefault(body.logger, stderrLogger)),
  };
}

/** host name, process id and a random suffix: unique per worker, readable in the log. */
export function defaultHolder(): string {
  return `${hostname()}/${process.pid}/${randomBytes(4).toString('hex')}`;
}

/** An object with setTimeout and clearTimeout functions (a class instance of fake timers is fine); kept as given, so its methods keep their `this`. */
function requireTimers(value: unknown): Timers {
  let ok: boolean;
  try {
    ok =
      typeof value === 'object' &&
      value !== null &&
      typeof (value as Timers).setTimeout === 'function' &&
      typeof (value as Timers).clearTimeout === 'function';
  } catch {
    ok = false;
  }
  if (!ok) throw invalidArgument(`timers must have setTimeout(callback, ms) and clearTimeout(handle) functions, got ${describe(value)}`);
  return value as Timers;
}

/** A listener that throws, or (async) rejects, must not break a run nor end the process. */
function guarded(listener: (event: WorkerEvent) => void): (event: WorkerEvent) => void {
  // The listener's own fault; the worker carries on.
  return (event) => callListener(listener, [event], () => {});
}
