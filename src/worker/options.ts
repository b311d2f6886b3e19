/** Worker options: defaults, and InvalidArgument naming any bad value. */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { invalidArgument } from '../errors.ts';
import { describe, rejectUnknownKeys, requireInteger, requireName, requireObject } from '../queue/validate.ts';
import { defaultBackoff } from './backoff.ts';
import { realTimers } from './timers.ts';
import type { Timers, WorkerEvent, WorkerOptions } from './types.ts';

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
  timers: Timers;
  onEvent: (event: WorkerEvent) => void;
}

const OPTION_KEYS = ['concurrency', 'leaseMs', 'pollMs', 'maxAttempts', 'backoff', 'holder', 'graceMs', 'periodicTenant', 'timers', 'onEvent'];
const DAY_MS = 24 * 3600 * 1000;

export function resolveOptions(options: WorkerOptions = {}): ResolvedOptions {
  const body = requireObject('worker options', options);
  rejectUnknownKeys('worker options', body, OPTION_KEYS);
  return {
    concurrency: requireInteger('concurrency', options.concurrency ?? DEFAULT_CONCURRENCY, 1, 10_000),
    leaseMs: requireInteger('leaseMs', options.leaseMs ?? DEFAULT_LEASE_MS, 2, 365 * DAY_MS),
    pollMs: requireInteger('pollMs', options.pollMs ?? DEFAULT_POLL_MS, 1, DAY_MS),
    maxAttempts: options.maxAttempts === undefined ? null : requireInteger('maxAttempts', options.maxAttempts, 1, 2 ** 31 - 1),
    backoff: requireFunction('backoff', options.backoff ?? defaultBackoff),
    holder: options.holder === undefined ? defaultHolder() : requireName('holder', options.holder),
    graceMs: requireInteger('graceMs', options.graceMs ?? DEFAULT_GRACE_MS, 0, DAY_MS),
    periodicTenant: requireName('periodicTenant', options.periodicTenant ?? DEFAULT_PERIODIC_TENANT),
    timers: requireTimers(options.timers ?? realTimers),
    onEvent: guarded(requireFunction('onEvent', options.onEvent ?? (() => {}))),
  };
}

/** host name, process id and a random suffix: unique per worker, readable in the log. */
export function defaultHolder(): string {
  return `${hostname()}/${process.pid}/${randomBytes(4).toString('hex')}`;
}

export function requireFunction<F>(name: string, value: F): F {
  if (typeof value !== 'function') throw invalidArgument(`${name} must be a function, got ${describe(value)}`);
  return value;
}

function requireTimers(value: Timers): Timers {
  const body = requireObject('timers', value);
  if (typeof body.setTimeout !== 'function' || typeof body.clearTimeout !== 'function') {
    throw invalidArgument('timers must have setTimeout(callback, ms) and clearTimeout(handle) functions');
  }
  return value;
}

/** A listener that throws must not break a run. */
function guarded(listener: (event: WorkerEvent) => void): (event: WorkerEvent) => void {
  return (event) => {
    try {
      listener(event);
    } catch {
      // The listener's own fault; the worker carries on.
    }
  };
}
