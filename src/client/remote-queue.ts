/**
 * The RunQueueApi over HTTP (WIRE.md): what `connect` answers. Each call checks its
 * arguments with the library's own checks (src/queue/requests.ts, src/validation) before any
 * request, so a malformed call writes nothing and is refused naming the value exactly as in
 * process; it then reads the arguments into the request body at once (a caller changing its
 * buffer after the call changes nothing), sends it, and converts the answer back (src/wire).
 * Retries: retry-policy.ts. now(): server-clock.ts. onWork: work-signal.ts.
 */
import { RunlogError } from '../errors.ts';
import { partitionOfEntryId } from '../queue/entry-id.ts';
import {
  awaitOptions,
  closeFields,
  leaseArgument,
  optionalTenants,
  submissionFields,
  takeEntryRequest,
  takeRequest,
  ttl,
  yieldFields,
} from '../queue/requests.ts';
import type {
  Attempt,
  AwaitOptions,
  CloseRequest,
  CloseStatus,
  Entry,
  Lease,
  PartitionHealth,
  QueueMetrics,
  RunQueueApi,
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
  entryFromJson,
  healthFromJson,
  submitToJson,
  takenFromJson,
  type EntryJson,
  type PartitionHealthJson,
  type TakenJson,
} from '../wire/index.ts';
import type { Http } from './http.ts';
import { withRetries, type Repeatable, type RetrySettings } from './retry-policy.ts';
import type { ServerClock } from './server-clock.ts';
import type { WorkSignal } from './work-signal.ts';

/** No limit of the client's own: the server refuses what is larger than its queue takes, naming its limit. */
const NO_LIMIT = Number.MAX_SAFE_INTEGER;
const MAX_TEXT = 64 * 1024;

/** A take's long-poll: wait up to `waitMs` (at most 60 s) for something takeable; `signal` gives up (rejecting with its reason). */
export interface TakeWait {
  waitMs?: number;
  signal?: AbortSignal;
}

export interface RemoteSettings {
  retry: RetrySettings;
  /** How long a call waits for its answer (beyond the wait a long-poll asked for), ms. */
  requestTimeoutMs: number;
}

interface Call {
  method: 'GET' | 'POST' | 'DELETE';
  path: string;
  body?: unknown;
  repeatable: Repeatable;
  signal?: AbortSignal | undefined;
  /** A long-poll's own wait, added to the request timeout. */
  waitMs?: number;
}

export class RemoteQueue implements RunQueueApi {
  #stopped = false;

  constructor(
    /** The server's base url. */
    readonly url: string,
    private readonly http: Http,
    private readonly clock: ServerClock,
    private readonly work: WorkSignal,
    private readonly settings: RemoteSettings,
  ) {}

  async submit(request: SubmitRequest): Promise<Ticket> {
    this.#requireRunning();
    const { key, notBefore, deadline, ...fields } = submissionFields(request, NO_LIMIT);
    const submission: SubmitRequest = {
      ...fields,
      ...(key === null ? {} : { key }),
      ...(notBefore === null ? {} : { notBefore }),
      ...(deadline === null ? {} : { deadline }),
    };
    // With a key, a repeat names the same entry; without one, it could create a second.
    const repeatable = key === null ? 'once' : 'repeatable';
    return (await this.#call({ method: 'POST', path: '/v1/submit', body: submitToJson(submission), repeatable })) as Ticket;
  }

  /** Leases the best takeable entry; with `wait.waitMs`, waits up to that long for one (a long-poll woken by the queue's work signal). */
  async take(request: TakeRequest, wait?: TakeWait): Promise<Taken | null> {
    this.#requireRunning();
    const { tenants, ...checked } = takeRequest(request);
    const { waitMs, signal } = takeWait(wait);
    const body = { ...checked, ...(tenants === null ? {} : { tenants }), ...(waitMs === 0 ? {} : { waitMs }) };
    const answer = (await this.#call({ method: 'POST', path: '/v1/take', body, repeatable: 'once', signal, waitMs })) as {
      taken: TakenJson | null;
    };
    return takenFromJson(answer.taken);
  }

  async takeEntry(tenant: string, entryId: string, request: Omit<TakeRequest, 'agents'>): Promise<Taken | null> {
    this.#requireRunning();
    const body = takeEntryRequest(request);
    const path = `${entryPath(tenant, entryId)}/take`;
    const answer = (await this.#call({ method: 'POST', path, body, repeatable: 'once' })) as { taken: TakenJson | null };
    return takenFromJson(answer.taken);
  }

  async extend(lease: Lease, ttlMs: number): Promise<Lease> {
    const body = { lease: this.#lease(lease), ttlMs: ttl(ttlMs) };
    return (await this.#call({ method: 'POST', path: '/v1/leases/extend', body, repeatable: 'repeatable' })) as Lease;
  }

  async startAttempt(lease: Lease, runId: string): Promise<Attempt> {
    const body = { lease: this.#lease(lease), runId: requireName('runId', runId) };
    return (await this.#call({ method: 'POST', path: '/v1/leases/start-attempt', body, repeatable: 'once' })) as Attempt;
  }

  async yield(lease: Lease, request: YieldRequest): Promise<boolean> {
    const checked = this.#lease(lease);
    const { kind, error, delayMs } = yieldFields(request);
    const yielded: YieldRequest = kind === 'defer' ? { kind } : { kind, error: error!, ...(delayMs === null ? {} : { delayMs }) };
    const answer = await this.#call({
      method: 'POST',
      path: '/v1/leases/yield',
      body: { lease: checked, request: yielded },
      repeatable: 'once',
    });
    return (answer as { yielded: boolean }).yielded;
  }

  async close(lease: Lease, request: CloseRequest): Promise<Entry> {
    const checked = this.#lease(lease);
    const { outcome, result, error } = closeFields(request, NO_LIMIT);
    const closing: CloseRequest = {
      status: outcome as CloseStatus,
      ...(result === null ? {} : { result }),
      ...(error === null ? {} : { error }),
    };
    const body = { lease: checked, request: closeRequestToJson(closing) };
    return entryFromJson((await this.#call({ method: 'POST', path: '/v1/leases/close', body, repeatable: 'once' })) as EntryJson);
  }

  async cancel(tenant: string, entryId: string, reason?: string): Promise<Entry> {
    this.#requireRunning();
    const path = `${entryPath(tenant, entryId)}/cancel`;
    const why = optionalText('reason', reason, MAX_TEXT);
    const body = why === null ? {} : { reason: why };
    return entryFromJson((await this.#call({ method: 'POST', path, body, repeatable: 'once' })) as EntryJson);
  }

  async entry(tenant: string, entryId: string): Promise<Entry> {
    this.#requireRunning();
    const path = entryPath(tenant, entryId);
    return entryFromJson((await this.#call({ method: 'GET', path, repeatable: 'repeatable' })) as EntryJson);
  }

  async openEntries(tenant: string, thread: string): Promise<Entry[]> {
    this.#requireRunning();
    const answer = await this.#call({ method: 'GET', path: `${threadPath(tenant, thread)}/entries`, repeatable: 'repeatable' });
    return (answer as { entries: EntryJson[] }).entries.map(entryFromJson);
  }

  async deleteThread(tenant: string, thread: string): Promise<number> {
    this.#requireRunning();
    const answer = await this.#call({ method: 'DELETE', path: threadPath(tenant, thread), repeatable: 'once' });
    return (answer as { deleted: number }).deleted;
  }

  async prune(ticketLifetimeMs: number, limit: number): Promise<number> {
    this.#requireRunning();
    const body = { ticketLifetimeMs: requireInteger('ticketLifetimeMs', ticketLifetimeMs, 0), limit: requireInteger('limit', limit, 0) };
    return ((await this.#call({ method: 'POST', path: '/v1/prune', body, repeatable: 'once' })) as { pruned: number }).pruned;
  }

  /**
   * Long-polls in chunks of at most the server's longest wait (60 s), until the entry closes,
   * `timeoutMs` of real time passes (null), or the signal aborts (its reason) or the client
   * stops (Stopped): either ends the request in flight at once. A server that answers a chunk
   * early (it was closing) is asked again for the time left.
   */
  async awaitClosed(tenant: string, entryId: string, options: AwaitOptions = {}): Promise<Entry | null> {
    this.#requireRunning();
    const { signal, timeoutMs } = awaitOptions(options);
    const path = `${entryPath(tenant, entryId)}/closed`;
    const deadline = timeoutMs === undefined ? Infinity : performance.now() + timeoutMs;
    for (;;) {
      const waitMs = Math.max(0, Math.min(MAX_WAIT_MS, Math.ceil(deadline - performance.now())));
      const call: Call = { method: 'GET', path: `${path}?waitMs=${waitMs}`, repeatable: 'repeatable', signal, waitMs };
      const answer = (await this.#call(call)) as { entry: EntryJson | null };
      if (answer.entry !== null) return entryFromJson(answer.entry);
      if (performance.now() >= deadline) return null;
    }
  }

  async nextDueAt(agents: readonly string[], tenants?: readonly string[]): Promise<number | null> {
    this.#requireRunning();
    const checked = { agents: requireNames('agents', agents), tenants: optionalTenants(tenants) };
    const body = checked.tenants === null ? { agents: checked.agents } : checked;
    return ((await this.#call({ method: 'POST', path: '/v1/next-due', body, repeatable: 'repeatable' })) as { nextDueAt: number | null })
      .nextDueAt;
  }

  /** The first listener opens the server's work signal stream (GET /v1/work); see work-signal.ts. */
  onWork(listener: () => void): () => void {
    return this.work.add(listener);
  }

  async metrics(): Promise<QueueMetrics> {
    this.#requireRunning();
    return (await this.#call({ method: 'GET', path: '/v1/metrics', repeatable: 'repeatable' })) as QueueMetrics;
  }

  async health(): Promise<PartitionHealth[]> {
    this.#requireRunning();
    const answer = await this.#call({ method: 'GET', path: '/v1/health', repeatable: 'repeatable' });
    return (answer as { partitions: PartitionHealthJson[] }).partitions.map(healthFromJson);
  }

  /** The server's store clock, followed from its answers' `runlog-now` (server-clock.ts). */
  now(): number {
    return this.clock.now();
  }

  /** Asks the server for its clock (connect does, first: it proves the url and the token). */
  async readNow(): Promise<number> {
    this.#requireRunning();
    return ((await this.#call({ method: 'GET', path: '/v1/now', repeatable: 'repeatable' })) as { now: number }).now;
  }

  /** Ends this client's requests, long-polls and work stream (they fail Stopped), and later calls are Stopped. The server runs on. */
  async stop(): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    this.work.stop();
    this.http.stop();
  }

  /** The lease argument, checked as the queue checks it (and its entry id as the queue routes it). */
  #lease(lease: Lease): Lease {
    this.#requireRunning();
    const checked = leaseArgument(lease);
    partitionOfEntryId(checked.entryId, Infinity);
    return checked;
  }

  #call({ method, path, body, repeatable, signal, waitMs = 0 }: Call): Promise<unknown> {
    const timeoutMs = waitMs + this.settings.requestTimeoutMs;
    const stopped = this.http.stopping;
    const retrySignal = signal === undefined ? stopped : AbortSignal.any([stopped, signal]);
    return withRetries(() => this.http.request(method, path, { body, signal, timeoutMs }), repeatable, this.settings.retry, retrySignal);
  }

  #requireRunning(): void {
    if (this.#stopped) throw new RunlogError('Stopped', 'the client was stopped');
  }
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
