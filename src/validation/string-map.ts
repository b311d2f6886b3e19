/** A map of strings argument (metadata). */
import { invalidArgument } from '../errors.ts';
import { describe } from '../describe.ts';
import { requireObject } from './options-object.ts';
import { requireWellFormed } from './text.ts';

/**
 * A plain object of well-formed strings (metadata), read once into a copy: at most
 * `limits.maxKeys` keys and `limits.maxBytes` bytes (the UTF-8 of its keys and values
 * together), so the record it goes into is bounded (record-bounds.ts).
 */
export function requireStringMap(name: string, value: unknown, limits: { maxKeys: number; maxBytes: number }): Record<string, string> {
  if (value === undefined || value === null) return {};
  const entries = Object.entries(requireObject(name, value));
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
