/**
 * What each call of the client sends, built once from its arguments: checked with the
 * library's own checks (src/queue/requests.ts, src/validation), so a malformed call is
 * refused naming the value exactly as in process and sends nothing; read into the request
 * body at once (a caller changing its buffer after the call changes nothing, also when the
 * call is sent again); with how to read its answer (src/wire) and where it belongs: the
 * partition of its thread or of its entry, for a cluster's client to route it.
 *
 * The single server's client (node-queue.ts) sends a call to its server; the cluster's
 * (cluster-queue.ts) to its partition's owner, again to another after a refusal.
 */
import { RunlogError } from '../errors.ts';
import { partitionOf } from '../log/partitioner.ts';
import type { SubmissionFields } from '../queue/commands.ts';
import { partitionOfEntryId } from '../queue/entry-id.ts';
import {
  closeBatchFields,
  closeFields,
  leaseArgument,
  optionalTenants,
  startRequest,
  submitBatchFields,
  submissionFields,
  takeEntryRequest,
  takeRequest,
  ttl,
  yieldFields,
} from '../queue/requests.ts';
import type {
  Attempt,
  BatchAnswer,
  CloseRequest,
  CloseStatus,
  Entry,
  Lease,
  LeaseClose,
  LeaseTerms,
  PartitionHealth,
  QueueMetrics,
  Started,
  StartRequest,
  SubmitRequest,
  Taken,
  TakeRequest,
  Ticket,
  YieldRequest,
} from '../queue/types.ts';
import { optionalOptions, optionalSignal, optionalText, requireInteger, requireName, requireNames } from '../validation/index.ts';
import {
  MAX_WAIT_MS,
  closeRequestToJson,
  closedFromJson,
  closesFromJson,
  entryFromJson,
  healthFromJson,
  startedFromJson,
  submitToJson,
  takenFromJson,
  ticketsFromJson,
  type ClosedBatchAnswer,
  type ClosesAnswer,
  type StartedJson,
  type SubmittedAnswer,
  type ClusterAnswer,
  type EntryJson,
  type PartitionHealthJson,
  type TakenJson,
} from '../wire/index.ts';
import type { Repeatable } from './retry-policy.ts';

/** No limit of the client's own: the server refuses what is larger than its queue takes, naming its limit. */
const NO_LIMIT = Number.MAX_SAFE_INTEGER;
const MAX_TEXT = 64 * 1024;

/** A take's long-poll: wait up to `waitMs` (at most 60 s) for something takeable; `signal` gives up (rejecting with its reason). */
export interface TakeWait {
  waitMs?: number;
  signal?: AbortSignal;
}

/** Where a call belongs in a cluster: the partition of a thread, or of an entry (by its id). */
export type Route = { tenant: string; thread: string } | { entryId: string };

export interface Call<T> {
  method: 'GET' | 'POST' | 'DELETE';
  path: string;
  body?: unknown;
  repeatable: Repeatable;
  signal?: AbortSignal | undefined;
  /** A long-poll's own wait, added to the request timeout. */
  waitMs?: number;
  /** The answer's JSON as the library's value. */
  read(answer: unknown): T;
  /** Absent: a call about the queue as a whole (a cluster asks every node). */
  route?: Route;
}

/** The partition a call belongs to among `partitions` (an entry id naming one past the count was never issued: TicketNotFound). */
export function partitionOfRoute(route: Route, partitions: number): number {
  return 'entryId' in route ? partitionOfEntryId(route.entryId, partitions) : partitionOf(route.tenant, route.thread, partitions);
}

export function submitCall(request: SubmitRequest): Call<Ticket> {
  const fields = submissionFields(request, NO_LIMIT);
  // With a key, a repeat names the same entry; without one, it could create a second.
  const repeatable = fields.key === null ? 'once' : 'repeatable';
  const route = { tenant: fields.tenant, thread: fields.thread };
  return { method: 'POST', path: '/v1/submit', body: submissionToJson(fields), repeatable, read: (answer) => answer as Ticket, route };
}

/**
 * The batch submit of checked requests (submitBatchRequests), routed by its first item (a
 * cluster's client sends one call per partition). Repeatable when every item has a key.
 */
export function submitBatchCall(fields: readonly SubmissionFields[]): Call<BatchAnswer<'ticket', Ticket>[]> {
  const repeatable = fields.every((item) => item.key !== null) ? 'repeatable' : 'once';
  const route = { tenant: fields[0]!.tenant, thread: fields[0]!.thread };
  const body = { requests: fields.map(submissionToJson) };
  const read = (answer: unknown): BatchAnswer<'ticket', Ticket>[] => ticketsFromJson(answer as SubmittedAnswer);
  return { method: 'POST', path: '/v1/submit-batch', body, repeatable, read, route };
}

/** submitBatch's requests checked as the queue checks them (a malformed item names its index; nothing is sent). */
export function submitBatchRequests(requests: readonly SubmitRequest[]): SubmissionFields[] {
  return submitBatchFields(requests, NO_LIMIT);
}

export function takeStartedCall(request: StartRequest): Call<Started[]> {
  const { tenants, attemptCap, ...checked } = startRequest(request);
  const body = { ...checked, ...(tenants === null ? {} : { tenants }), ...(attemptCap === null ? {} : { maxAttempts: attemptCap }) };
  const read = (answer: unknown): Started[] => (answer as { started: StartedJson[] }).started.map(startedFromJson);
  return { method: 'POST', path: '/v1/take-started', body, repeatable: 'once', read };
}

/** The batch close of checked closes (closeBatchRequests), routed by its first item's entry. */
export function closeBatchCall(closes: readonly LeaseClose[]): Call<BatchAnswer<'entry', Entry>[]> {
  const body = { closes: closesJson(closes) };
  const read = (answer: unknown): BatchAnswer<'entry', Entry>[] => closedFromJson(answer as ClosedBatchAnswer);
  return { method: 'POST', path: '/v1/leases/close-batch', body, repeatable: 'once', read, route: leaseRoute(closes[0]!.lease) };
}

/**
 * The Worker's closes (src/queue/in-process.ts closeRuns): close-batch with `entries: false`,
 * answered per item with its refusal or null; the closed entries, inputs and all, are not sent
 * back. Checked closes (closeBatchRequests), routed by the first.
 */
export function closeRunsCall(closes: readonly LeaseClose[]): Call<(RunlogError | null)[]> {
  const body = { closes: closesJson(closes), entries: false };
  const read = (answer: unknown): (RunlogError | null)[] => closesFromJson(answer as ClosesAnswer);
  return { method: 'POST', path: '/v1/leases/close-batch', body, repeatable: 'once', read, route: leaseRoute(closes[0]!.lease) };
}

/** close-batch's closes as the wire carries them. */
function closesJson(closes: readonly LeaseClose[]) {
  return closes.map(({ lease, request }) => ({ lease, request: closeRequestToJson(request) }));
}

/**
 * A Worker's closes (closeRuns) checked as closeBatchRequests checks them. The Worker's are
 * class instances (src/worker/closer.ts Pending), which closeBatch's check of a caller's
 * items refuses (each must be a plain object): before this, every batch of a Worker's closes
 * over HTTP was refused by the client and sent again one close per item.
 */
export function runCloseRequests(closes: readonly LeaseClose[]): LeaseClose[] {
  return closeBatchRequests(closes.map(({ lease, request }) => ({ lease, request })));
}

/** closeBatch's closes checked as the queue checks them (a malformed item names its index), each lease's entry id as the queue routes it. */
export function closeBatchRequests(closes: readonly LeaseClose[]): LeaseClose[] {
  return closeBatchFields(closes, NO_LIMIT).map(({ lease, request: { outcome, result, error } }, i) => {
    try {
      partitionOfEntryId(lease.entryId, Infinity);
    } catch (refusal) {
      throw refusal instanceof Error ? new RunlogError('InvalidArgument', `closes[${i}]: ${refusal.message}`) : refusal;
    }
    const request: CloseRequest = {
      status: outcome as CloseStatus,
      ...(result === null ? {} : { result }),
      ...(error === null ? {} : { error }),
    };
    return { lease, request };
  });
}

/** Checked submission fields as the wire's submit body (an absent optional left out). */
function submissionToJson({ key, notBefore, deadline, ...fields }: SubmissionFields): ReturnType<typeof submitToJson> {
  const submission: SubmitRequest = {
    ...fields,
    ...(key === null ? {} : { key }),
    ...(notBefore === null ? {} : { notBefore }),
    ...(deadline === null ? {} : { deadline }),
  };
  return submitToJson(submission);
}

/** A take's checked terms (without its wait) and its wait. */
export interface TakeParts {
  body: Record<string, unknown>;
  agents: string[];
  tenants: string[] | undefined;
  waitMs: number;
  signal: AbortSignal | undefined;
}

export function takeParts(request: TakeRequest, wait: TakeWait | undefined): TakeParts {
  const { tenants, ...checked } = takeRequest(request);
  const { waitMs, signal } = takeWait(wait);
  const body = { ...checked, ...(tenants === null ? {} : { tenants }) };
  return { body, agents: checked.agents, tenants: tenants ?? undefined, waitMs, signal };
}

/** The take request, long-polling `waitMs` on its server (0: answers at once). */
export function takeCall({ body }: TakeParts, waitMs: number, signal: AbortSignal | undefined): Call<Taken | null> {
  return {
    method: 'POST',
    path: '/v1/take',
    body: waitMs === 0 ? body : { ...body, waitMs },
    repeatable: 'once',
    signal,
    waitMs,
    read: (answer) => takenFromJson((answer as { taken: TakenJson | null }).taken),
  };
}

export function takeEntryCall(tenant: string, entryId: string, request: LeaseTerms): Call<Taken | null> {
  const body = takeEntryRequest(request);
  const path = `${entryPath(tenant, entryId)}/take`;
  const read = (answer: unknown): Taken | null => takenFromJson((answer as { taken: TakenJson | null }).taken);
  return { method: 'POST', path, body, repeatable: 'once', read, route: { entryId } };
}

export function extendCall(lease: Lease, ttlMs: number): Call<Lease> {
  const checked = checkedLease(lease);
  const body = { lease: checked, ttlMs: ttl(ttlMs) };
  return { method: 'POST', path: '/v1/leases/extend', body, repeatable: 'repeatable', read: (a) => a as Lease, route: leaseRoute(checked) };
}

export function startAttemptCall(lease: Lease, runId: string): Call<Attempt> {
  const checked = checkedLease(lease);
  const body = { lease: checked, runId: requireName('runId', runId) };
  const path = '/v1/leases/start-attempt';
  return { method: 'POST', path, body, repeatable: 'once', read: (a) => a as Attempt, route: leaseRoute(checked) };
}

export function yieldCall(lease: Lease, request: YieldRequest): Call<boolean> {
  const checked = checkedLease(lease);
  const { kind, error, delayMs } = yieldFields(request);
  const yielded: YieldRequest = kind === 'defer' ? { kind } : { kind, error: error!, ...(delayMs === null ? {} : { delayMs }) };
  const read = (answer: unknown): boolean => (answer as { yielded: boolean }).yielded;
  const body = { lease: checked, request: yielded };
  return { method: 'POST', path: '/v1/leases/yield', body, repeatable: 'once', read, route: leaseRoute(checked) };
}

export function closeCall(lease: Lease, request: CloseRequest): Call<Entry> {
  const checked = checkedLease(lease);
  const { outcome, result, error } = closeFields(request, NO_LIMIT);
  const closing: CloseRequest = {
    status: outcome as CloseStatus,
    ...(result === null ? {} : { result }),
    ...(error === null ? {} : { error }),
  };
  const body = { lease: checked, request: closeRequestToJson(closing) };
  return { method: 'POST', path: '/v1/leases/close', body, repeatable: 'once', read: readEntry, route: leaseRoute(checked) };
}

export function cancelCall(tenant: string, entryId: string, reason: string | undefined): Call<Entry> {
  const path = `${entryPath(tenant, entryId)}/cancel`;
  const why = optionalText('reason', reason, MAX_TEXT);
  const body = why === null ? {} : { reason: why };
  return { method: 'POST', path, body, repeatable: 'once', read: readEntry, route: { entryId } };
}

export function entryCall(tenant: string, entryId: string): Call<Entry> {
  return { method: 'GET', path: entryPath(tenant, entryId), repeatable: 'repeatable', read: readEntry, route: { entryId } };
}

export function openEntriesCall(tenant: string, thread: string): Call<Entry[]> {
  const path = `${threadPath(tenant, thread)}/entries`;
  const read = (answer: unknown): Entry[] => (answer as { entries: EntryJson[] }).entries.map(entryFromJson);
  return { method: 'GET', path, repeatable: 'repeatable', read, route: { tenant, thread } };
}

export function deleteThreadCall(tenant: string, thread: string): Call<number> {
  const read = (answer: unknown): number => (answer as { deleted: number }).deleted;
  return { method: 'DELETE', path: threadPath(tenant, thread), repeatable: 'once', read, route: { tenant, thread } };
}

export function pruneCall(ticketLifetimeMs: number, limit: number): Call<number> {
  const body = { ticketLifetimeMs: requireInteger('ticketLifetimeMs', ticketLifetimeMs, 0), limit: requireInteger('limit', limit, 0) };
  return { method: 'POST', path: '/v1/prune', body, repeatable: 'once', read: (answer) => (answer as { pruned: number }).pruned };
}

/** One chunk of an awaitClosed long-poll: the closed entry, or null when `waitMs` passed first. */
export function closedCall(tenant: string, entryId: string, waitMs: number, signal: AbortSignal | undefined): Call<Entry | null> {
  const path = `${entryPath(tenant, entryId)}/closed?waitMs=${waitMs}`;
  const read = (answer: unknown): Entry | null => {
    const { entry } = answer as { entry: EntryJson | null };
    return entry === null ? null : entryFromJson(entry);
  };
  return { method: 'GET', path, repeatable: 'repeatable', signal, waitMs, read, route: { entryId } };
}

export function nextDueCall(agents: readonly string[], tenants: readonly string[] | undefined): Call<number | null> {
  const checked = { agents: requireNames('agents', agents), tenants: optionalTenants(tenants) };
  const body = checked.tenants === null ? { agents: checked.agents } : checked;
  const read = (answer: unknown): number | null => (answer as { nextDueAt: number | null }).nextDueAt;
  return { method: 'POST', path: '/v1/next-due', body, repeatable: 'repeatable', read };
}

export const metricsCall: Call<QueueMetrics> = {
  method: 'GET',
  path: '/v1/metrics',
  repeatable: 'repeatable',
  read: (answer) => answer as QueueMetrics,
};

export const healthCall: Call<PartitionHealth[]> = {
  method: 'GET',
  path: '/v1/health',
  repeatable: 'repeatable',
  read: (answer) => (answer as { partitions: PartitionHealthJson[] }).partitions.map(healthFromJson),
};

export const nowCall: Call<number> = { method: 'GET', path: '/v1/now', repeatable: 'repeatable', read: (a) => (a as { now: number }).now };

/** Who serves which partition (the answer is checked where it is used: cluster-map.ts). */
export const clusterCall: Call<ClusterAnswer> = {
  method: 'GET',
  path: '/v1/cluster',
  repeatable: 'repeatable',
  read: (answer) => answer as ClusterAnswer,
};

function readEntry(answer: unknown): Entry {
  return entryFromJson(answer as EntryJson);
}

/** The lease argument, checked as the queue checks it (and its entry id as the queue routes it). */
function checkedLease(lease: Lease): Lease {
  const checked = leaseArgument(lease);
  partitionOfEntryId(checked.entryId, Infinity);
  return checked;
}

function leaseRoute(lease: Lease): Route {
  return { entryId: lease.entryId };
}

function takeWait(wait: TakeWait | undefined): { waitMs: number; signal: AbortSignal | undefined } {
  const options = optionalOptions('take wait', wait, ['waitMs', 'signal']);
  return {
    waitMs: options.waitMs === undefined ? 0 : requireInteger('waitMs', options.waitMs, 0, MAX_WAIT_MS),
    signal: optionalSignal('signal', options.signal),
  };
}

/** An entry's path, its arguments checked as the queue checks them (a string that names no ticket is TicketNotFound). */
function entryPath(tenant: string, entryId: string): string {
  requireName('tenant', tenant);
  partitionOfEntryId(entryId, Infinity);
  return `/v1/tenants/${segment(tenant)}/entries/${segment(entryId)}`;
}

function threadPath(tenant: string, thread: string): string {
  return `/v1/tenants/${segment(requireName('tenant', tenant))}/threads/${segment(requireName('thread', thread))}`;
}

/** A name as one path segment: percent-encoded, dots too (so `.` and `..` stay names, not steps up the path). */
function segment(name: string): string {
  return encodeURIComponent(name).replace(/\./g, '%2E');
}
