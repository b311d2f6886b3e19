/** Input checks: bad input is a RunlogError('InvalidArgument') naming the value; nothing is written. */
import { invalidArgument } from '../errors.ts';
import { isAbortSignal, isUint8Array } from './brand-checks.ts';
import { describe } from './describe.ts';
import { readArray, readObject } from './options-object.ts';
import { isWellFormed } from './well-formed.ts';

const MAX_NAME_LENGTH = 1024;

/** The longest a Node timer waits: a longer setTimeout/setInterval fires after 1 ms instead. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * An object argument read once into a checked copy (see options-object.ts): a plain
 * object, no key outside `allowed` when given, a throwing getter InvalidArgument.
 */
export function requireObject<K extends string>(name: string, value: unknown, allowed?: readonly K[]): Partial<Record<K, unknown>> {
  return readObject(name, value, allowed);
}

/** An optional options argument: undefined reads as {}, anything else must be a plain object of `allowed` keys. */
export function optionalOptions<K extends string>(name: string, value: unknown, allowed: readonly K[]): Partial<Record<K, unknown>> {
  return value === undefined ? {} : readObject(name, value, allowed);
}

/** A non-empty name (tenant, thread, agent, holder, key, run id, entry id): well-formed text without NUL characters. */
export function requireName(name: string, value: unknown): string {
  if (typeof value !== 'string' || value.length === 0) {
    throw invalidArgument(`${name} must be a non-empty string, got ${describe(value)}`);
  }
  if (value.length > MAX_NAME_LENGTH) throw invalidArgument(`${name} is longer than ${MAX_NAME_LENGTH} characters: ${describe(value)}`);
  if (value.includes('\u0000')) throw invalidArgument(`${name} must not contain NUL characters: ${describe(value)}`);
  return requireWellFormed(name, value);
}

/**
 * Text UTF-8 can carry: a lone UTF-16 surrogate would be stored as U+FFFD, so what was
 * stored would differ from what was given (and a replay from what the live view held).
 */
export function requireWellFormed(name: string, value: string): string {
  if (!isWellFormed(value)) throw invalidArgument(`${name} holds a lone UTF-16 surrogate, which UTF-8 cannot store: ${describe(value)}`);
  return value;
}

/** A timer duration in ms: an integer from `min` to MAX_TIMER_MS. */
export function requireTimerMs(name: string, value: unknown, min: number): number {
  return requireInteger(name, value, min, MAX_TIMER_MS);
}

/**
 * An option's value, or `fallback` when it is left out (undefined). Not `??`: null is no
 * way to ask for the default, and is checked like any other value.
 */
export function orDefault(value: unknown, fallback: unknown): unknown {
  return value === undefined ? fallback : value;
}

/** A non-empty array of names (agents), read once into a copy. */
export function requireNames(name: string, value: unknown): string[] {
  const items = readArray(name, value, 'a non-empty array of names');
  if (items.length === 0) throw invalidArgument(`${name} must be a non-empty array of names, got ${describe(value)}`);
  return items.map((item, i) => requireName(`${name}[${i}]`, item));
}

/** An optional AbortSignal: a real one (see brand-checks.ts), never a Proxy or a look-alike. */
export function optionalSignal(name: string, value: unknown): AbortSignal | undefined {
  if (value !== undefined && !isAbortSignal(value)) throw invalidArgument(`${name} must be an AbortSignal, got ${describe(value)}`);
  return value;
}

export function requireInteger(name: string, value: unknown, min: number, max = Number.MAX_SAFE_INTEGER): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min || value > max) {
    throw invalidArgument(`${name} must be an integer from ${min} to ${max}, got ${describe(value)}`);
  }
  return value;
}

export function optionalInteger(name: string, value: unknown, min: number, max?: number): number | null {
  return value === undefined || value === null ? null : requireInteger(name, value, min, max);
}

export function optionalName(name: string, value: unknown): string | null {
  return value === undefined || value === null ? null : requireName(name, value);
}

export function optionalText(name: string, value: unknown, maxLength: number): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string') throw invalidArgument(`${name} must be a string, got ${describe(value)}`);
  if (value.length > maxLength) throw invalidArgument(`${name} is longer than ${maxLength} characters`);
  return requireWellFormed(name, value);
}

export function requireOneOf<T extends string>(name: string, value: unknown, allowed: readonly T[]): T {
  if (typeof value !== 'string' || !allowed.includes(value as T)) {
    throw invalidArgument(`${name} must be one of ${allowed.join(', ')}, got ${describe(value)}`);
  }
  return value as T;
}

const encoder = new TextEncoder();

/** Up to this size V8 keeps a new Uint8Array's bytes in its own heap (no native backing store). */
const ON_HEAP_BYTES = 64;

/**
 * Bytes or a UTF-8 string, at most maxBytes. Bytes are copied: the view keeps them, and a
 * caller reusing its buffer after the call must not change what the log says. Small
 * encoded strings are copied too: TextEncoder's array holds a native backing store, which
 * costs an open entry more memory than a small input itself.
 */
export function requireBytes(name: string, value: unknown, maxBytes: number): Uint8Array {
  if (typeof value === 'string') requireWellFormed(name, value);
  const bytes = typeof value === 'string' ? encoder.encode(value) : value;
  if (!isUint8Array(bytes)) throw invalidArgument(`${name} must be a Uint8Array or a string, got ${describe(value)}`);
  if (bytes.byteLength > maxBytes) {
    throw invalidArgument(`${name} is ${bytes.byteLength} bytes, more than the limit of ${maxBytes} (maxInputBytes)`);
  }
  return typeof value === 'string' && bytes.length > ON_HEAP_BYTES ? bytes : copyOf(bytes);
}

/** `new Uint8Array(n)`, not Uint8Array.from: only the former keeps small arrays on V8's heap. */
function copyOf(bytes: Uint8Array): Uint8Array {
  const copy = new Uint8Array(bytes.length);
  copy.set(bytes);
  return copy;
}

/**
 * A plain object of well-formed strings (metadata), read once into a copy: at most
 * `limits.maxKeys` keys and `limits.maxBytes` bytes (the UTF-8 of its keys and values
 * together), so the record it goes into is bounded (record-bounds.ts).
 */
export function requireStringMap(name: string, value: unknown, limits: { maxKeys: number; maxBytes: number }): Record<string, string> {
  if (value === undefined || value === null) return {};
  const entries = Object.entries(readObject(name, value));
  if (entries.length > limits.maxKeys)
    throw invalidArgument(`${name} has ${entries.length} keys, more than the limit of ${limits.maxKeys}`);
  const map: Record<string, string> = {};
  let bytes = 0;
  for (const [key, item] of entries) {
    if (key === '__proto__') throw invalidArgument(`${name} must not have a "__proto__" key`);
    requireWellFormed(`a key of ${name}`, key);
    if (typeof item !== 'string') throw invalidArgument(`${name}.${key} must be a string, got ${describe(item)}`);
    map[key] = requireWellFormed(`${name}.${key}`, item);
    bytes += Buffer.byteLength(key) + Buffer.byteLength(item);
  }
  if (bytes > limits.maxBytes)
    throw invalidArgument(`${name} is ${bytes} bytes (UTF-8 of its keys and values), more than the limit of ${limits.maxBytes}`);
  return map;
}
