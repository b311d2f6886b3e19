/** Turns what a handler threw or returned into the error text recorded on the entry. */
import { describe } from '../queue/validate.ts';

const MAX_ERROR_CHARS = 8 * 1024;

export function describeFailure(error: unknown): string {
  const text = error instanceof Error ? `${error.name}: ${error.message}` : `the handler threw a non-Error value: ${describe(error)}`;
  return text.length > MAX_ERROR_CHARS ? `${text.slice(0, MAX_ERROR_CHARS)}…` : text;
}

/** The error as an Error, for callers that rethrow it (ensureFresh). */
export function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(describeFailure(error), { cause: error });
}

/** Null when the handler's value can be a result; otherwise why not. */
export function badResult(value: unknown): string | null {
  if (value === undefined || typeof value === 'string' || value instanceof Uint8Array) return null;
  return `the handler returned ${describe(value)}; a result must be a Uint8Array, a string or undefined`;
}
