/** Arguments of other kinds: a signal, a function, a boolean; and how an option left out takes its default. */
import { invalidArgument } from '../errors.ts';
import { isAbortSignal } from './brand-checks.ts';
import { describe } from '../describe.ts';

/**
 * An option's value, or `fallback` when it is left out (undefined). Not `??`: null is no
 * way to ask for the default, and is checked like any other value.
 */
export function orDefault(value: unknown, fallback: unknown): unknown {
  return value === undefined ? fallback : value;
}

/** An AbortSignal: a real one (see brand-checks.ts), never a Proxy or a look-alike. */
export function requireSignal(name: string, value: unknown): AbortSignal {
  if (!isAbortSignal(value)) throw invalidArgument(`${name} must be an AbortSignal, got ${describe(value)}`);
  return value;
}

export function optionalSignal(name: string, value: unknown): AbortSignal | undefined {
  return value === undefined ? undefined : requireSignal(name, value);
}

export function requireFunction<F = (...args: never[]) => unknown>(name: string, value: unknown): F {
  if (typeof value !== 'function') throw invalidArgument(`${name} must be a function, got ${describe(value)}`);
  return value as F;
}

/** Undefined (left out), or a function; null is no way to ask for the default. */
export function optionalFunction<F = (...args: never[]) => unknown>(name: string, value: unknown): F | undefined {
  return value === undefined ? undefined : requireFunction<F>(name, value);
}

export function requireBoolean(name: string, value: unknown): boolean {
  if (typeof value !== 'boolean') throw invalidArgument(`${name} must be a boolean, got ${describe(value)}`);
  return value;
}
