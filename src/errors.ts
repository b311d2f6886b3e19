/**
 * The one error class of runlog. Callers test `code`, never the message;
 * messages name the offending value.
 */
import { describe } from './describe.ts';

export const ERROR_CODES = [
  'ThreadBusy',
  'SubmissionKeyReused',
  'TicketExpired',
  'TicketNotFound',
  'EntryClosed',
  'LeaseNotCurrent',
  'RunIdReused',
  'QueueFull',
  'Stopped',
  'Parked',
  'NotOwner',
  'Fenced',
  'InvalidArgument',
  /** The log holds bytes runlog cannot read (a malformed record in the middle of a segment). */
  'Corrupt',
  /** The log backend failed (I/O error, broker unreachable); usually retriable. */
  'LogUnavailable',
  /** Another process holds the writer lock of an embedded log directory. */
  'Locked',
  /** The service: no valid bearer token was presented (HTTP 401). */
  'Unauthorized',
  /** The service: the token does not allow this role or tenant (HTTP 403). */
  'Forbidden',
  /** The service failed in a way it did not expect; its log names the request (HTTP 500). */
  'Internal',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

const RETRIABLE: ReadonlySet<ErrorCode> = new Set<ErrorCode>(['ThreadBusy', 'QueueFull', 'LogUnavailable', 'NotOwner']);

export interface RunlogErrorOptions {
  cause?: unknown;
  retriable?: boolean;
  /** NotOwner: the base URL of the node that owns the partition, when known. */
  owner?: string;
}

export class RunlogError extends Error {
  override readonly name = 'RunlogError';
  readonly code: ErrorCode;
  readonly retriable: boolean;
  /** NotOwner: the base URL of the node that owns the partition, when known (a cluster, src/cluster). */
  readonly owner?: string;

  constructor(code: ErrorCode, message: string, options: RunlogErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.retriable = options.retriable ?? RETRIABLE.has(code);
    if (options.owner !== undefined) this.owner = options.owner;
  }
}

/** Whether `error` is a RunlogError (of `code`, when given). A code runlog does not have is InvalidArgument: a misspelt one would never match. */
export function isRunlogError(error: unknown, code?: ErrorCode): error is RunlogError {
  if (code !== undefined && !(ERROR_CODES as readonly unknown[]).includes(code)) {
    throw invalidArgument(`code must be one of ${ERROR_CODES.join(', ')}, got ${describe(code)}`);
  }
  return error instanceof RunlogError && (code === undefined || error.code === code);
}

/** Shorthand for the most common refusal: bad input, nothing written. */
export function invalidArgument(message: string): RunlogError {
  return new RunlogError('InvalidArgument', message);
}
