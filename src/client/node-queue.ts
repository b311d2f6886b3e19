/**
 * The RunQueueApi over HTTP (WIRE.md) of one server: what `connect` answers for a single
 * server, and what a cluster's client (cluster-queue.ts) sends each node's calls through.
 * Each call is built by calls.ts (arguments checked as in process, read into the body at
 * once), sent, and its answer converted back. Retries: retry-policy.ts (a cluster's nodes
 * are given none: the cluster retries, choosing the node again). now(): server-clock.ts.
 * onWork: work-signal.ts.
 */
import { RunlogError } from '../errors.ts';
import { closeRuns } from '../queue/in-process.ts';
import { awaitOptions } from '../queue/requests.ts';
import type {
  Attempt,
  AwaitOptions,
  BatchAnswer,
  CloseRequest,
  Entry,
  Lease,
  LeaseClose,
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
import { MAX_WAIT_MS, type ClusterAnswer } from '../wire/index.ts';
import * as calls from './calls.ts';
import type { Call, TakeWait } from './calls.ts';
import type { Http } from './http.ts';
import type { RemoteQueue } from './remote-queue.ts';
import { withRetries, type RetrySettings } from './retry-policy.ts';
import type { ServerClock } from './server-clock.ts';
import type { WorkSignal } from './work-signal.ts';

export interface RemoteSettings {
  retry: RetrySettings;
  /** How long a call waits for its answer (beyond the wait a long-poll asked for), ms. */
  requestTimeoutMs: number;
}

export class NodeQueue implements RemoteQueue {
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
    return this.send(calls.submitCall(request));
  }

  /** Leases the best takeable entry; with `wait.waitMs`, waits up to that long for one (a long-poll woken by the queue's work signal). */
  async take(request: TakeRequest, wait?: TakeWait): Promise<Taken | null> {
    this.#requireRunning();
    const parts = calls.takeParts(request, wait);
    return this.send(calls.takeCall(parts, parts.waitMs, parts.signal));
  }

  async submitBatch(requests: readonly SubmitRequest[]): Promise<BatchAnswer<'ticket', Ticket>[]> {
    this.#requireRunning();
    return this.send(calls.submitBatchCall(calls.submitBatchRequests(requests)));
  }

  async takeStarted(request: StartRequest): Promise<Started[]> {
    this.#requireRunning();
    return this.send(calls.takeStartedCall(request));
  }

  async closeBatch(closes: readonly LeaseClose[]): Promise<BatchAnswer<'entry', Entry>[]> {
    this.#requireRunning();
    return this.send(calls.closeBatchCall(calls.closeBatchRequests(closes)));
  }

  /** A Worker's closes (in-process.ts): closeBatch answered without the closed entries. */
  async [closeRuns](closes: readonly LeaseClose[]): Promise<(RunlogError | null)[]> {
    this.#requireRunning();
    return this.send(calls.closeRunsCall(calls.runCloseRequests(closes)));
  }

  async takeEntry(tenant: string, entryId: string, request: Omit<TakeRequest, 'agents'>): Promise<Taken | null> {
    this.#requireRunning();
    return this.send(calls.takeEntryCall(tenant, entryId, request));
  }

  async extend(lease: Lease, ttlMs: number): Promise<Lease> {
    this.#requireRunning();
    return this.send(calls.extendCall(lease, ttlMs));
  }

  async startAttempt(lease: Lease, runId: string): Promise<Attempt> {
    this.#requireRunning();
    return this.send(calls.startAttemptCall(lease, runId));
  }

  async yield(lease: Lease, request: YieldRequest): Promise<boolean> {
    this.#requireRunning();
    return this.send(calls.yieldCall(lease, request));
  }

  async close(lease: Lease, request: CloseRequest): Promise<Entry> {
    this.#requireRunning();
    return this.send(calls.closeCall(lease, request));
  }

  async cancel(tenant: string, entryId: string, reason?: string): Promise<Entry> {
    this.#requireRunning();
    return this.send(calls.cancelCall(tenant, entryId, reason));
  }

  async entry(tenant: string, entryId: string): Promise<Entry> {
    this.#requireRunning();
    return this.send(calls.entryCall(tenant, entryId));
  }

  async openEntries(tenant: string, thread: string): Promise<Entry[]> {
    this.#requireRunning();
    return this.send(calls.openEntriesCall(tenant, thread));
  }

  async deleteThread(tenant: string, thread: string): Promise<number> {
    this.#requireRunning();
    return this.send(calls.deleteThreadCall(tenant, thread));
  }

  async prune(ticketLifetimeMs: number, limit: number): Promise<number> {
    this.#requireRunning();
    return this.send(calls.pruneCall(ticketLifetimeMs, limit));
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
    calls.closedCall(tenant, entryId, 0, signal); // checks the arguments before the first chunk
    const deadline = timeoutMs === undefined ? Infinity : performance.now() + timeoutMs;
    for (;;) {
      const waitMs = Math.max(0, Math.min(MAX_WAIT_MS, Math.ceil(deadline - performance.now())));
      const entry = await this.send(calls.closedCall(tenant, entryId, waitMs, signal));
      if (entry !== null) return entry;
      if (performance.now() >= deadline) return null;
    }
  }

  async nextDueAt(agents: readonly string[], tenants?: readonly string[]): Promise<number | null> {
    this.#requireRunning();
    return this.send(calls.nextDueCall(agents, tenants));
  }

  /** The first listener opens the server's work signal stream (GET /v1/work); see work-signal.ts. */
  onWork(listener: () => void): () => void {
    return this.work.add(listener);
  }

  async metrics(): Promise<QueueMetrics> {
    this.#requireRunning();
    return this.send(calls.metricsCall);
  }

  async health(): Promise<PartitionHealth[]> {
    this.#requireRunning();
    return this.send(calls.healthCall);
  }

  /** The server's store clock, followed from its answers' `runlog-now` (server-clock.ts). */
  now(): number {
    return this.clock.now();
  }

  /** Asks the server for its clock (connect does, first: it proves the url and the token). */
  async readNow(): Promise<number> {
    this.#requireRunning();
    return this.send(calls.nowCall);
  }

  /** Who serves which partition (GET /v1/cluster): a single server owns them all. */
  async cluster(): Promise<ClusterAnswer> {
    this.#requireRunning();
    return this.send(calls.clusterCall);
  }

  /** Ends this client's requests, long-polls and work stream (they fail Stopped), and later calls are Stopped. The server runs on. */
  async stop(): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    this.work.stop();
    this.http.stop();
  }

  /** Closes the work signal stream for good (a cluster's client lets go of a node its map no longer names). */
  stopWork(): void {
    this.work.stop();
  }

  /** Sends a built call (retried by the policy), and reads its answer. */
  async send<T>({ method, path, body, repeatable, signal, waitMs = 0, read }: Call<T>): Promise<T> {
    this.#requireRunning();
    const timeoutMs = waitMs + this.settings.requestTimeoutMs;
    const stopped = this.http.stopping;
    const retrySignal = signal === undefined ? stopped : AbortSignal.any([stopped, signal]);
    const call = (): Promise<unknown> => this.http.request(method, path, { body, signal, timeoutMs });
    return read(await withRetries(call, repeatable, this.settings.retry, retrySignal));
  }

  #requireRunning(): void {
    if (this.#stopped) throw new RunlogError('Stopped', 'the client was stopped');
  }
}
