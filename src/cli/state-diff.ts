/**
 * Where two plain values differ (`runlog verify` comparing a snapshot's state with the
 * replay's): a depth-first walk over objects, arrays, byte arrays, bigints and primitives,
 * answering each differing path with both sides, up to a limit.
 */
import { clipText } from '../clip-text.ts';

export interface Difference {
  /** e.g. `threads[0].open[1].attempts`; '' is the whole value. */
  path: string;
  left: string;
  right: string;
}

export function differences(left: unknown, right: unknown, limit = 10): Difference[] {
  const found: Difference[] = [];
  walk(left, right, '', found, limit);
  return found;
}

function walk(left: unknown, right: unknown, path: string, found: Difference[], limit: number): void {
  if (found.length >= limit) return;
  if (left instanceof Uint8Array && right instanceof Uint8Array) {
    if (!sameBytes(left, right)) found.push({ path, left: shown(left), right: shown(right) });
    return;
  }
  if (Array.isArray(left) && Array.isArray(right)) {
    if (left.length !== right.length) found.push({ path: `${path}.length`, left: String(left.length), right: String(right.length) });
    for (let i = 0; i < Math.min(left.length, right.length); i++) walk(left[i], right[i], `${path}[${i}]`, found, limit);
    return;
  }
  if (isRecord(left) && isRecord(right)) {
    const keys = [...new Set([...Object.keys(left), ...Object.keys(right)])];
    for (const key of keys) walk(left[key], right[key], path === '' ? key : `${path}.${key}`, found, limit);
    return;
  }
  if (!Object.is(left, right)) found.push({ path, left: shown(left), right: shown(right) });
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Uint8Array);
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((byte, i) => byte === b[i]);
}

/** A side as short text: JSON, bigints as digits, bytes as their length and first bytes in hex. */
function shown(value: unknown): string {
  if (value === undefined) return '(absent)';
  if (value instanceof Uint8Array) return `${value.length} bytes ${Buffer.from(value.subarray(0, 16)).toString('hex')}`;
  const text = JSON.stringify(value, (_key, v: unknown) => (typeof v === 'bigint' ? v.toString() : v instanceof Uint8Array ? shown(v) : v));
  return clipText(text ?? String(value), 200);
}
