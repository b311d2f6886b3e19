/** Text arguments: names, free text, a choice among words, a path. Each must be well-formed, so UTF-8 stores it as given. */
import { invalidArgument } from '../errors.ts';
import { describe } from '../describe.ts';
import { readArray } from './options-object.ts';

/** The longest name (tenant, thread, agent, ...), in UTF-16 code units. */
export const MAX_NAME_LENGTH = 1024;

/** Whether `text` has no lone UTF-16 surrogate, so UTF-8 stores it as is. */
export function isWellFormed(text: string): boolean {
  // String.prototype.isWellFormed: Node 20+, not yet in TypeScript's ES2022 lib.
  return (text as unknown as { isWellFormed(): boolean }).isWellFormed();
}

/**
 * Text UTF-8 can carry: a lone UTF-16 surrogate would be stored as U+FFFD, so what was
 * stored would differ from what was given (and a replay from what the live view held).
 */
export function requireWellFormed(name: string, value: string): string {
  if (!isWellFormed(value)) throw invalidArgument(`${name} holds a lone UTF-16 surrogate, which UTF-8 cannot store: ${describe(value)}`);
  return value;
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

export function optionalName(name: string, value: unknown): string | null {
  return value === undefined || value === null ? null : requireName(name, value);
}

/** A non-empty array of names (agents), read once into a copy. */
export function requireNames(name: string, value: unknown): string[] {
  const items = readArray(name, value, 'a non-empty array of names');
  if (items.length === 0) throw invalidArgument(`${name} must be a non-empty array of names, got ${describe(value)}`);
  return items.map((item, i) => requireName(`${name}[${i}]`, item));
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

/** A file system path: non-empty, no NUL (the system would cut it there), well-formed (a lone surrogate would name another path: its UTF-8 is U+FFFD). */
export function requirePath(name: string, value: unknown): string {
  if (typeof value !== 'string' || value.length === 0) throw invalidArgument(`${name} must be a non-empty path, got ${describe(value)}`);
  if (value.includes('\u0000')) throw invalidArgument(`${name} must not contain NUL characters, got ${describe(value)}`);
  return requireWellFormed(name, value);
}
