/**
 * Text the codec refuses to encode because it would not read back as written, which would
 * break "replay rebuilds exactly the live view": a string with a lone UTF-16 surrogate
 * (UTF-8 cannot carry it; it would decode as U+FFFD), and a map key "__proto__" (a JS
 * reader would set the prototype instead of a key). Checked per event on encode.
 */
import { invalidArgument } from '../errors.ts';
import { isWellFormed } from '../validation/index.ts';
import type { AvroField } from './schemas.ts';

export interface TextField {
  readonly name: string;
  readonly kind: 'string' | 'map' | 'array';
}

/** The fields of a record schema that hold text, found once per schema. */
export function textFields(fields: readonly AvroField[]): TextField[] {
  const found: TextField[] = [];
  for (const { name, type } of fields) {
    const kind = (['string', 'map', 'array'] as const).find((k) => isOf(type, k));
    if (kind) found.push({ name, kind });
  }
  return found;
}

/** Whether a field type is `kind`, or a union with a `kind` branch. */
export function isOf(type: unknown, kind: string): boolean {
  if (Array.isArray(type)) return type.some((t) => isOf(t, kind));
  if (typeof type === 'object' && type !== null) return (type as { type?: unknown }).type === kind;
  return type === kind;
}

/** Throws InvalidArgument naming the field if any text of `event` would not read back as is. */
export function checkText(eventType: string, event: Readonly<Record<string, unknown>>, fields: readonly TextField[]): void {
  for (const { name, kind } of fields) {
    const value = event[name];
    const ok = kind === 'string' ? isText(value) : kind === 'map' ? isTextMap(value) : isTextArray(value);
    if (!ok) throw invalidArgument(`cannot encode ${eventType}: ${name} holds a lone UTF-16 surrogate or a "__proto__" key`);
  }
}

function isText(value: unknown): boolean {
  return typeof value !== 'string' || isWellFormed(value);
}

function isTextMap(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return true; // not a map: avsc reports it
  if (Object.hasOwn(value, '__proto__')) return false;
  for (const key in value) if (!isWellFormed(key) || !isText((value as Record<string, unknown>)[key])) return false;
  return true;
}

function isTextArray(value: unknown): boolean {
  return !Array.isArray(value) || value.every(isText);
}
