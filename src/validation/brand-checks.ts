/**
 * What kind of value a caller passed, asked so that the answer never throws and runs none
 * of the caller's code. `instanceof` does neither: it walks the prototype chain, which on a
 * Proxy (or an object whose chain holds one) calls a getPrototypeOf trap, and on a revoked
 * Proxy throws a TypeError; it also answers true for an object that merely inherits from
 * the class (Object.create(AbortSignal.prototype)) and fails at first use. These test the
 * brand the runtime gives the real thing, which a Proxy does not have.
 */
import { types } from 'node:util';

const abortedGetter = Object.getOwnPropertyDescriptor(AbortSignal.prototype, 'aborted')!.get!;

/** A real AbortSignal (also one of another class extending it); never a Proxy of one. */
export function isAbortSignal(value: unknown): value is AbortSignal {
  if (typeof value !== 'object' || value === null || types.isProxy(value)) return false;
  try {
    abortedGetter.call(value); // the runtime's own brand check: throws for anything else
    return true;
  } catch {
    return false;
  }
}

/** A real Uint8Array (a Buffer too); never a Proxy of one, whose bytes would be read through its traps. */
export function isUint8Array(value: unknown): value is Uint8Array {
  return types.isUint8Array(value);
}

/** An array, or a Proxy of one (read it with readArray); false where even asking throws (a revoked Proxy). */
export function isArray(value: unknown): value is unknown[] {
  try {
    return Array.isArray(value);
  } catch {
    return false;
  }
}
