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
  const bytes = checkBytes(name, value, maxBytes);
  return typeof value === 'string' && bytes.length > ON_HEAP_BYTES ? bytes : copyOf(bytes);
}

/**
 * requireBytes' check without its copy: the caller's own bytes, or a string's UTF-8. For a
 * caller that copies many at once before it returns (sharedCopies).
 */
export function checkBytes(name: string, value: unknown, maxBytes: number): Uint8Array {
  if (typeof value === 'string') requireWellFormed(name, value);
  const bytes = typeof value === 'string' ? encoder.encode(value) : value;
  if (!isUint8Array(bytes)) throw invalidArgument(`${name} must be a Uint8Array or a string, got ${describe(value)}`);
  if (bytes.byteLength > maxBytes) {
    throw invalidArgument(`${name} is ${bytes.byteLength} bytes, more than the limit of ${maxBytes} (maxInputBytes)`);
  }
  return bytes;
}

/** sharedCopies: arrays of at least this many bytes get a buffer of their own; smaller ones share buffers of SHARED_BYTES. */
const OWN_BUFFER_BYTES = 4 << 10;
const SHARED_BYTES = 64 << 10;

/**
 * Copies of `arrays`: the small ones views of shared 64 KiB buffers, filled in order (one
 * allocation, and one object for the collector to track, per 64 KiB instead of per array),
 * the large ones copies of their own. A shared buffer lives while any of its views does.
 */
export function sharedCopies(arrays: readonly Uint8Array[]): Uint8Array[] {
  let shared = new Uint8Array(0);
  let used = 0;
  return arrays.map((bytes) => {
    const length = bytes.length;
    if (length >= OWN_BUFFER_BYTES) return copyOf(bytes);
    if (used + length > shared.length) {
      shared = new Uint8Array(SHARED_BYTES);
      used = 0;
    }
    const copy = shared.subarray(used, used + length);
    copy.set(bytes);
    used += length;
    return copy;
  });
}

/** `new Uint8Array(n)`, not Uint8Array.from: only the former keeps small arrays on V8's heap. */
function copyOf(bytes: Uint8Array): Uint8Array {
  const copy = new Uint8Array(bytes.length);
  copy.set(bytes);
  return copy;
}
