/** Bytes arguments (an input, a result): a Uint8Array or a UTF-8 string, bounded, copied. */
import { invalidArgument } from '../errors.ts';
import { isUint8Array } from './brand-checks.ts';
import { describe } from '../describe.ts';
import { requireWellFormed } from './text.ts';

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
