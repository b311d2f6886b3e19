/**
 * RunlogErrors over HTTP: each code's status, the problem body (application/problem+json)
 * the server answers, and the error a client rebuilds from it. Server and client share this
 * table, so a refusal reads the same on both sides of the wire.
 */
import { ERROR_CODES, RunlogError, type ErrorCode } from '../errors.ts';
import type { ErrorBody } from './shapes.ts';

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

const STATUS: Readonly<Record<ErrorCode, number>> = {
  InvalidArgument: 400,
  Unauthorized: 401,
  Forbidden: 403,
  TicketNotFound: 404,
  TicketExpired: 410,
  ThreadBusy: 409,
  SubmissionKeyReused: 409,
  EntryClosed: 409,
  LeaseNotCurrent: 409,
  RunIdReused: 409,
  Parked: 409,
  NotOwner: 421,
  QueueFull: 429,
  Stopped: 503,
  LogUnavailable: 503,
  Locked: 503,
  Fenced: 503,
  Corrupt: 500,
  Internal: 500,
};

/** The HTTP status a refusal with `code` answers (400 for InvalidArgument; the server answers 413, 415, 404, 405 for what HTTP names better). */
export function statusOf(code: ErrorCode): number {
  return STATUS[code];
}

/** Headers a refusal carries besides its body: how to authenticate, when to come back. */
export function problemHeaders(code: ErrorCode): Record<string, string> {
  if (code === 'Unauthorized') return { 'www-authenticate': 'Bearer' };
  if (code === 'QueueFull' || code === 'LogUnavailable') return { 'retry-after': '1' };
  return {};
}

/** The problem body of a RunlogError; `status` when the answer's status is not the code's own (413, 415, 404, 405). */
export function errorBody(error: RunlogError, status = statusOf(error.code)): ErrorBody {
  return {
    type: `urn:runlog:error:${error.code}`,
    title: error.code,
    status,
    code: error.code,
    message: error.message,
    retriable: error.retriable,
    ...(error.owner === undefined ? {} : { owner: error.owner }),
  };
}

/**
 * The RunlogError a problem body names. An answer that is no problem body of runlog's (a
 * proxy's error page, say) still becomes a RunlogError: by its status, saying what came.
 */
export function errorFromBody(status: number, body: unknown): RunlogError {
  if (isErrorBody(body)) {
    const owner = (body as { owner?: unknown }).owner;
    return new RunlogError(body.code, body.message, { retriable: body.retriable, ...(typeof owner === 'string' ? { owner } : {}) });
  }
  const shown = typeof body === 'string' ? body.slice(0, 200) : JSON.stringify(body)?.slice(0, 200);
  return new RunlogError(codeOfStatus(status), `HTTP ${status} without a runlog problem body: ${shown ?? String(body)}`);
}

function isErrorBody(body: unknown): body is ErrorBody {
  if (typeof body !== 'object' || body === null) return false;
  const { code, message, retriable } = body as Record<string, unknown>;
  return (ERROR_CODES as readonly unknown[]).includes(code) && typeof message === 'string' && typeof retriable === 'boolean';
}

/** A code for an answer without a problem body: the usual meaning of its status. */
function codeOfStatus(status: number): ErrorCode {
  if (status === 401) return 'Unauthorized';
  if (status === 403) return 'Forbidden';
  if (status === 429) return 'QueueFull';
  if (status === 502 || status === 503 || status === 504) return 'LogUnavailable';
  if (status >= 400 && status < 500) return 'InvalidArgument';
  return 'Internal';
}
