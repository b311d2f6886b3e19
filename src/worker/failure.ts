/** Turns what a handler threw or returned into the error text recorded on the entry. */
import { types } from 'node:util';
import { clipText, toWellFormed } from '../clip-text.ts';
import { describe } from '../validation/index.ts';

const MAX_ERROR_CHARS = 8 * 1024;

export function describeFailure(error: unknown): string {
  return recordableError(failureText(error));
}

/**
 * Text the queue will take as an entry's error: its lone surrogates (a handler's message
 * may hold any string) made U+FFFD, cut to MAX_ERROR_CHARS without splitting a pair.
 * Refused text would leave the failed attempt unrecorded and its entry waiting out the lease.
 */
export function recordableError(text: string): string {
  return clipText(toWellFormed(text), MAX_ERROR_CHARS);
}

/** An Error's name and message; any other value, or an Error whose name or message cannot be read, described without running its code. */
function failureText(error: unknown): string {
  try {
    if (error instanceof Error) return `${error.name}: ${error.message}`;
  } catch {
    return `the handler threw ${describe(error)}, whose name or message could not be read`;
  }
  return `the handler threw a non-Error value: ${describe(error)}`;
}

/** The error as an Error, for callers that rethrow it (ensureFresh). */
export function asError(error: unknown): Error {
  return isError(error) ? error : new Error(describeFailure(error), { cause: error });
}

function isError(error: unknown): error is Error {
  try {
    return error instanceof Error;
  } catch {
    return false;
  }
}

/** Null when the handler's value can be a result; otherwise why not. */
export function badResult(value: unknown): string | null {
  if (value === undefined || typeof value === 'string' || types.isUint8Array(value)) return null;
  return `the handler returned ${describe(value)}; a result must be a Uint8Array, a string or undefined`;
}
