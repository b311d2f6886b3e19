/**
 * Reads an object argument (options, a request, a map of strings) the one safe way:
 *   - it must be a plain object (prototype Object.prototype or null): a Map, a Date, an
 *     array, a class instance or a primitive is refused, never read as `{}`;
 *   - with a list of allowed keys, any other own key is refused (a misspelt option would
 *     otherwise be a silent default);
 *   - each own property is read exactly once, into a copy the caller checks and uses, so a
 *     getter cannot answer one value to the check and another to the use, and a getter or
 *     proxy trap that throws is InvalidArgument naming the property, never a raw error.
 * Only own enumerable string keys count: nothing inherited (a polluted Object.prototype)
 * is read.
 */
import { isArray } from './brand-checks.ts';
import { invalidArgument } from '../errors.ts';
import { describe } from '../describe.ts';

/** The own properties of `value`, read once into a copy; `allowed` given: any other key is refused. */
export function requireObject<K extends string>(name: string, value: unknown, allowed?: readonly K[]): Partial<Record<K, unknown>> {
  const keys = ownKeys(name, value);
  if (allowed !== undefined) rejectUnknownKeys(name, keys, allowed);
  const copy: Record<string, unknown> = {};
  for (const key of keys) {
    const item = readProperty(name, value as object, key);
    // Assigning "__proto__" would set the copy's prototype rather than a key.
    if (key === '__proto__') Object.defineProperty(copy, key, { value: item, enumerable: true, writable: true, configurable: true });
    else copy[key] = item;
  }
  return copy as Partial<Record<K, unknown>>;
}

/** An optional options argument: undefined reads as {}, anything else must be a plain object of `allowed` keys. */
export function optionalOptions<K extends string>(name: string, value: unknown, allowed: readonly K[]): Partial<Record<K, unknown>> {
  return value === undefined ? {} : requireObject(name, value, allowed);
}

/**
 * An array argument read once into a copy (the caller checks and uses the copy). A Proxy
 * of an array counts as one; a revoked one, or a trap or getter that throws, is
 * InvalidArgument naming the argument, never a raw TypeError.
 */
export function readArray(name: string, value: unknown, expected = 'an array'): unknown[] {
  if (!isArray(value)) throw invalidArgument(`${name} must be ${expected}, got ${describe(value)}`);
  try {
    return Array.from(value);
  } catch (error) {
    throw invalidArgument(`${name} could not be read: ${describe(error)}`);
  }
}

/** Refuses the first of `keys` that is not `allowed`. */
export function rejectUnknownKeys(name: string, keys: readonly string[], allowed: readonly string[]): void {
  for (const key of keys) {
    if (!allowed.includes(key))
      throw invalidArgument(`${name} has an unknown option ${describe(key)}; allowed: ${allowed.join(', ') || 'none'}`);
  }
}

/** Whether `value` is a plain object; false for anything whose prototype cannot be read. */
export function isPlainObject(value: unknown): value is object {
  if (typeof value !== 'object' || value === null) return false;
  try {
    const prototype: unknown = Object.getPrototypeOf(value);
    return prototype === Object.prototype || prototype === null;
  } catch {
    return false;
  }
}

function ownKeys(name: string, value: unknown): string[] {
  if (!isPlainObject(value)) throw invalidArgument(`${name} must be a plain object, got ${describe(value)}`);
  try {
    return Object.keys(value);
  } catch (error) {
    throw invalidArgument(`${name} could not be read: its keys threw ${describe(error)}`);
  }
}

function readProperty(name: string, value: object, key: string): unknown {
  try {
    return (value as Record<string, unknown>)[key];
  } catch (error) {
    throw invalidArgument(`${name}.${key} could not be read: its getter threw ${describe(error)}`);
  }
}
