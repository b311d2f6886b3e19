/** Turns caller requests into validated fields, or refuses with InvalidArgument. */
import { RunlogError, invalidArgument } from '../errors.ts';
import type { CloseFields, SubmissionFields, YieldFields } from './commands.ts';
import type { CloseRequest, Lease, LeaseTerms, StartRequest, SubmitRequest, TakeRequest, YieldRequest } from './types.ts';
import {
  checkBytes,
  optionalInteger,
  optionalName,
  optionalOptions,
  optionalSignal,
  optionalText,
  orDefault,
  readArray,
  requireBytes,
  requireInteger,
  requireName,
  requireNames,
  requireObject,
  requireOneOf,
  requireStringMap,
  requireTimerMs,
  sharedCopies,
} from '../validation/index.ts';

export const DEFAULT_MAX_ATTEMPTS = 10;
/** The most items one batch may carry: submitBatch's requests, closeBatch's closes, takeStarted's max. */
export const MAX_BATCH = 10_000;
/**
 * The most bytes one answer takes (takeStarted, closeBatch; counted by public-entry.ts
 * answerBytesOf: inputs and results as base64, text at its worst JSON escape): an
 * answer is built whole (over HTTP one JSON text, base64 making 3 bytes 4, and V8's strings
 * end at ~512M characters), and it must be answerable once its commands are durable, in a
 * fraction of a lease. Measured before: a takeStarted of 600 entries of 1 MiB leased and
 * started them all, then failed to answer (500), and a Worker over HTTP spent every attempt of
 * its entries without running one. Over HTTP on the test VM an answer of 64 MiB took ~2.6 s
 * to build, send and read, so a Worker with 4 s leases lost most of them; 16 MiB, ~0.6 s.
 */
export const MAX_ANSWER_BYTES = 16 * 1024 * 1024;
/** A submission's metadata: at most this many keys, and this many bytes of keys and values (UTF-8). */
export const METADATA_LIMITS = { maxKeys: 128, maxBytes: 16 * 1024 };
const MAX_TTL_MS = 365 * 24 * 3600 * 1000;
const MAX_ERROR_LENGTH = 64 * 1024;
const INT32_MIN = -(2 ** 31);
const INT32_MAX = 2 ** 31 - 1;

const SUBMIT_KEYS = [
  'tenant',
  'thread',
  'agent',
  'input',
  'key',
  'strategy',
  'priority',
  'notBefore',
  'deadline',
  'maxAttempts',
  'metadata',
] as const;

/** The input of a submission, checked and (unless a batch copies its inputs together) copied. */
type InputCheck = (name: string, value: unknown, maxBytes: number) => Uint8Array;

export function submissionFields(request: SubmitRequest, maxInputBytes: number, input: InputCheck = requireBytes): SubmissionFields {
  const body = requireObject('submit request', request, SUBMIT_KEYS);
  const fields: SubmissionFields = {
    tenant: requireName('tenant', body.tenant),
    thread: requireName('thread', body.thread),
    agent: requireName('agent', body.agent),
    input: input('input', body.input, maxInputBytes),
    key: optionalName('key', body.key),
    strategy: body.strategy === undefined ? 'enqueue' : requireOneOf('strategy', body.strategy, ['enqueue', 'reject'] as const),
    priority: body.priority === undefined ? 0 : requireInteger('priority', body.priority, INT32_MIN, INT32_MAX),
    notBefore: optionalInteger('notBefore', body.notBefore, 0),
    deadline: optionalInteger('deadline', body.deadline, 0),
    maxAttempts: body.maxAttempts === undefined ? DEFAULT_MAX_ATTEMPTS : requireInteger('maxAttempts', body.maxAttempts, 1, INT32_MAX),
    // Most submissions carry none: one shared empty map (frozen, as the view's own: entry-state.ts).
    metadata: body.metadata === undefined ? NO_METADATA : requireStringMap('metadata', body.metadata, METADATA_LIMITS),
  };
  requireStartable(fields.notBefore, fields.deadline);
  return fields;
}

/**
 * A start deadline at or before notBefore leaves the entry no moment it may start: it may be
 * taken from notBefore on, and it expires once its deadline is reached. Accepted, it was closed
 * `expired` unrun, and `history` said it was waiting until then (the newcomer).
 */
function requireStartable(notBefore: number | null, deadline: number | null): void {
  if (notBefore === null || deadline === null || deadline > notBefore) return;
  throw invalidArgument(`deadline (${deadline}) is not after notBefore (${notBefore}): the entry could never start`);
}

const NO_METADATA: Record<string, string> = Object.freeze({});

/** A take request, checked: `tenants` null when left out (any tenant). */
export interface TakeFields extends LeaseTerms {
  agents: string[];
  tenants: string[] | null;
}

export function takeRequest(request: TakeRequest): TakeFields {
  const body = requireObject('take request', request, ['agents', 'tenants', 'holder', 'ttlMs']);
  return { agents: requireNames('agents', body.agents), tenants: optionalTenants(body.tenants), ...leaseTerms(body) };
}

/** takeStarted's request, checked: a take's, how many at most (default 1), and the attempt cap (null: none). */
export interface StartFields extends TakeFields {
  max: number;
  attemptCap: number | null;
}

export function startRequest(request: StartRequest): StartFields {
  const body = requireObject('takeStarted request', request, ['agents', 'tenants', 'holder', 'ttlMs', 'max', 'maxAttempts']);
  return {
    agents: requireNames('agents', body.agents),
    tenants: optionalTenants(body.tenants),
    ...leaseTerms(body),
    max: body.max === undefined ? 1 : requireInteger('max', body.max, 1, MAX_BATCH),
    attemptCap: optionalInteger('maxAttempts', body.maxAttempts, 1, INT32_MAX),
  };
}

/**
 * A batch's items read into a copy: a non-empty array of at most MAX_BATCH, each checked by
 * `check`; an item's InvalidArgument is prefixed with its index's name ("requests[3]: ...").
 */
export function batchItems<T>(name: string, value: unknown, check: (item: unknown) => T): T[] {
  const items = readArray(name, value);
  if (items.length === 0 || items.length > MAX_BATCH) {
    throw invalidArgument(`${name} must hold 1 to ${MAX_BATCH} items, got ${items.length}`);
  }
  const checked: T[] = new Array(items.length);
  for (let i = 0; i < items.length; i++) {
    try {
      checked[i] = check(items[i]);
    } catch (error) {
      throw itemError(`${name}[${i}]`, error); // the name made only for a refusal: a batch of 1,000 makes none
    }
  }
  return checked;
}

/**
 * submitBatch's requests, each checked as submit checks one (a refusal names the item:
 * "requests[3]: ..."). The inputs are copied once all are checked, into one buffer
 * (sharedCopies): a batch of small inputs costs one allocation, not one each.
 */
export function submitBatchFields(requests: unknown, maxInputBytes: number): SubmissionFields[] {
  const items = batchItems('requests', requests, (item) => submissionFields(item as SubmitRequest, maxInputBytes, checkBytes));
  const inputs = sharedCopies(items.map((item) => item.input));
  for (let i = 0; i < items.length; i++) items[i]!.input = inputs[i]!;
  return items;
}

/** closeBatch's closes, each a lease and a close request checked as close checks them. */
export function closeBatchFields(closes: unknown, maxResultBytes: number): { lease: Lease; request: CloseFields }[] {
  return batchItems('closes', closes, (item) => {
    const body = requireObject('close', item, ['lease', 'request']);
    return { lease: leaseArgument(body.lease as Lease), request: closeFields(body.request as CloseRequest, maxResultBytes) };
  });
}

/** A batch item's InvalidArgument, prefixed with the item's name; any other error as it is. */
function itemError(name: string, error: unknown): unknown {
  if (error instanceof RunlogError && error.code === 'InvalidArgument') {
    return new RunlogError('InvalidArgument', `${name}: ${error.message}`, { cause: error });
  }
  return error;
}

/** A tenant filter (take, nextDueAt): left out, any tenant (null); given, a non-empty array of names. */
export function optionalTenants(value: unknown): string[] | null {
  return value === undefined ? null : requireNames('tenants', value);
}

/** The request of takeEntry: a take of one named entry, so without agents or tenants. */
export function takeEntryRequest(request: LeaseTerms): LeaseTerms {
  const body = requireObject('take request', request, ['holder', 'ttlMs']);
  return leaseTerms(body);
}

function leaseTerms(body: { holder?: unknown; ttlMs?: unknown }): LeaseTerms {
  return { holder: requireName('holder', body.holder), ttlMs: ttl(body.ttlMs) };
}

export function ttl(value: unknown): number {
  return requireInteger('ttlMs', value, 1, MAX_TTL_MS);
}

export function leaseArgument(lease: Lease): Lease {
  const body = requireObject('lease', lease);
  return {
    tenant: requireName('lease.tenant', body.tenant),
    thread: requireName('lease.thread', body.thread),
    entryId: requireName('lease.entryId', body.entryId),
    agent: typeof body.agent === 'string' ? body.agent : '',
    holder: requireName('lease.holder', body.holder),
    epoch: requireInteger('lease.epoch', body.epoch, 1),
    expiresAt: requireInteger('lease.expiresAt', body.expiresAt, 0),
  };
}

export function yieldFields(request: YieldRequest): YieldFields {
  const body = requireObject('yield request', request, ['kind', 'error', 'delayMs']);
  const kind = requireOneOf('yield kind', body.kind, ['defer', 'retry'] as const);
  if (kind === 'defer') {
    if (body.error !== undefined || body.delayMs !== undefined)
      throw invalidArgument('a defer takes no error or delayMs (only a retry does)');
    return { kind, error: null, delayMs: null };
  }
  const error = optionalText('error', body.error, MAX_ERROR_LENGTH);
  if (error === null) throw invalidArgument('a retry must say its error: error must be a string');
  return { kind, error, delayMs: optionalInteger('delayMs', body.delayMs, 0, MAX_TTL_MS) };
}

export function closeFields(request: CloseRequest, maxResultBytes: number): CloseFields {
  const body = requireObject('close request', request, ['status', 'result', 'error']);
  return {
    outcome: requireOneOf('status', body.status, ['succeeded', 'failed', 'cancelled'] as const),
    result: body.result === undefined || body.result === null ? null : requireBytes('result', body.result, maxResultBytes),
    error: optionalText('error', body.error, MAX_ERROR_LENGTH),
  };
}

/** sweep's options: the ticket lifetime, and at most how many entries to prune (10,000 unless given). */
export function sweepOptions(options: unknown): { ticketLifetimeMs: number; limit: number } {
  const body = requireObject('sweep options', options, ['ticketLifetimeMs', 'limit']);
  return {
    ticketLifetimeMs: requireInteger('ticketLifetimeMs', body.ticketLifetimeMs, 0),
    limit: requireInteger('limit', orDefault(body.limit, 10_000), 0),
  };
}

/** awaitClosed's options: a plain object of an AbortSignal and a timer's timeout, nothing else. */
export function awaitOptions(options: unknown): { signal: AbortSignal | undefined; timeoutMs: number | undefined } {
  const body = optionalOptions('awaitClosed options', options, ['signal', 'timeoutMs']);
  return {
    signal: optionalSignal('signal', body.signal),
    timeoutMs: body.timeoutMs === undefined ? undefined : requireTimerMs('timeoutMs', body.timeoutMs, 0),
  };
}
