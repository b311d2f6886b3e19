/** Number arguments: integers within a range, timer durations. */
import { invalidArgument } from '../errors.ts';
import { describe } from '../describe.ts';

/** The longest a Node timer waits: a longer setTimeout/setInterval fires after 1 ms instead. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** A safe integer from `min` to `max`. */
export function requireInteger(name: string, value: unknown, min: number, max = Number.MAX_SAFE_INTEGER): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min || value > max) {
    throw invalidArgument(`${name} must be an integer from ${min} to ${max}, got ${describe(value)}`);
  }
  return value;
}

/** Left out (undefined or null): null; else requireInteger. */
export function optionalInteger(name: string, value: unknown, min: number, max?: number): number | null {
  return value === undefined || value === null ? null : requireInteger(name, value, min, max);
}

/** A timer duration in ms: an integer from `min` to MAX_TIMER_MS. */
export function requireTimerMs(name: string, value: unknown, min: number): number {
  return requireInteger(name, value, min, MAX_TIMER_MS);
}
