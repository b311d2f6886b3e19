/** Input checks: bad input is a RunlogError('InvalidArgument') naming the value; nothing is written. */
import { invalidArgument } from '../errors.ts';

const MAX_NAME_LENGTH = 1024;

export function describe(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.length > 80 ? `${value.slice(0, 80)}…` : value);
  if (typeof value === 'number') return String(value);
  if (typeof value === 'bigint') return `${value}n`;
  if (value instanceof Uint8Array) return `${value.byteLength} bytes`;
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

export function requireObject(name: string, value: unknown): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw invalidArgument(`${name} must be an object, got ${describe(value)}`);
  }
  return value as Record<string, unknown>;
}

export function rejectUnknownKeys(name: string, value: Record<string, unknown>, allowed: readonly string[]): void {
  for (const key of Object.keys(value)) {
    if (!allowed.includes(key)) throw invalidArgument(`${name} has an unknown option ${describe(key)}; allowed: ${allowed.join(', ')}`);
  }
}

/** A non-empty name (tenant, thread, agent, holder, key, run id) without NUL characters. */
export function requireName(name: string, value: unknown): string {
  if (typeof value !== 'string' || value.length === 0) {
    throw invalidArgument(`${name} must be a non-empty string, got ${describe(value)}`);
  }
  if (value.length > MAX_NAME_LENGTH) throw invalidArgument(`${name} is longer than ${MAX_NAME_LENGTH} characters: ${describe(value)}`);
  if (value.includes('\u0000')) throw invalidArgument(`${name} must not contain NUL characters: ${describe(value)}`);
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
  return value;
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
  const bytes = typeof value === 'string' ? encoder.encode(value) : value;
  if (!(bytes instanceof Uint8Array)) throw invalidArgument(`${name} must be a Uint8Array or a string, got ${describe(value)}`);
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
 * A map of strings, at most `limits.maxKeys` keys and `limits.maxBytes` bytes (the UTF-8
 * of its keys and values together): the record it goes into is bounded (record-bounds.ts).
 */
export function requireStringMap(name: string, value: unknown, limits: { maxKeys: number; maxBytes: number }): Record<string, string> {
  if (value === undefined || value === null) return {};
  const map = requireObject(name, value);
  const entries = Object.entries(map);
  if (entries.length > limits.maxKeys) throw invalidArgument(`${name} has ${entries.length} keys, more than the limit of ${limits.maxKeys}`);
  let bytes = 0;
  for (const [key, item] of entries) {
    if (typeof item !== 'string') throw invalidArgument(`${name}.${key} must be a string, got ${describe(item)}`);
    bytes += Buffer.byteLength(key) + Buffer.byteLength(item);
  }
  if (bytes > limits.maxBytes) throw invalidArgument(`${name} is ${bytes} bytes (UTF-8 of its keys and values), more than the limit of ${limits.maxBytes}`);
  return { ...(map as Record<string, string>) };
}
