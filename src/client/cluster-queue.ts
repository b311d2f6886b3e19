/**
 * The RunQueueApi over a runlog cluster (CLUSTER.md): what `connect` answers when the server
 * it reaches first is a cluster node (GET /v1/cluster names a group). Each node serves the
 * partitions its consumer group assigned it; the client keeps the map of who serves which
 * (cluster-map.ts) and sends every call to the node it belongs on:
 *
 *   - a call about one thread (submit, openEntries, deleteThread) to the owner of the thread's
 *     partition (partitionOf: Kafka's murmur2 of the thread key, as the nodes partition);
 *   - a call about one entry (entry, cancel, awaitClosed, takeEntry, and the lease calls) to
 *     the owner of the partition its id names (partitionOfEntryId);
 *   - take to the nodes in turn (cluster-take.ts); onWork: the union of their work streams
 *     (cluster-nodes.ts); nextDueAt, metrics and health to every owner, merged; prune to each
 *     owner in turn (no retry: it is not repeatable, and a node may have pruned).
 *
 * When the map is wrong (the partition moved, a node left), the node refuses: NotOwner,
 * naming the owner when it knows it. The client follows the owner at once (at most one hop
 * per partition of the cluster before it pauses: two nodes naming each other during a
 * rebalance do not bounce a call forever) and reads the map again in the background. A
 * NotOwner without an owner (the group is rebalancing), a node shutting down (Stopped), a
 * connection refused, and for what may be repeated a lost answer, are tried again after a
 * pause (the retry settings: the pauses and how long), the map read again first. A refusal
 * did nothing, so anything is sent again after one; after a lost answer only what may be
 * repeated (retry-policy.ts: never a take or an unkeyed submit that may have been done).
 *
 * The map is also read every `mapRefreshMs` (map-reader.ts), so nodes that joined are
 * listened to and taken from though nothing was refused.
 */
import { RunlogError, isRunlogError } from '../errors.ts';
import { addMetrics, emptyMetrics } from '../../projections/metrics.ts';
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
import { Backoff } from '../retry.ts';
import { MAX_WAIT_MS } from '../wire/index.ts';
import * as calls from './calls.ts';
import { partitionOfRoute, type Call, type Route, type TakeWait } from './calls.ts';
import { nodeUrl, type ClusterMap } from './cluster-map.ts';
import { MapReader } from './map-reader.ts';
import type { ClusterNodes } from './cluster-nodes.ts';
import { ClusterTake } from './cluster-take.ts';
import type { RemoteQueue } from './remote-queue.ts';
import { mayRetryInCluster, type Repeatable, type RetrySettings } from './retry-policy.ts';
import type { ServerClock } from './server-clock.ts';

export interface ClusterSettings {
  retry: RetrySettings;
  /** How often the map is read again, ms. */
  mapRefreshMs: number;
}

export class ClusterQueue implements RemoteQueue {
  readonly #stopping = new AbortController();
  readonly #take: ClusterTake;
  readonly #maps: MapReader;

  constructor(
    /** The node that answered connect first. */
    readonly url: string,
    private readonly map: ClusterMap,
    private readonly nodes: ClusterNodes,
    private readonly clock: ServerClock,
    private readonly settings: ClusterSettings,
  ) {
    this.nodes.follow(map.nodes());
    this.#maps = new MapReader(map, nodes, settings.mapRefreshMs);
    this.#take = new ClusterTake({
      owners: () => this.map.owners(),
      signalled: () => this.nodes.signalled(),
      node: (owner) => this.nodes.get(owner),
      refreshSoon: () => this.#maps.readSoon(),
      onWork: (listener) => this.nodes.onWork(listener),
      nextDueAt: (agents, tenants) => this.nextDueAt(agents, tenants),
      now: () => this.now(),
      requireRunning: () => this.#requireRunning(),
      stopping: this.#stopping.signal,
    });
  }

  /** The consumer group of the nodes. */
  get group(): string | null {
    return this.map.group;
  }

  async submit(request: SubmitRequest): Promise<Ticket> {
    this.#requireRunning();
    return this.#routed(calls.submitCall(request));
  }

  async take(request: TakeRequest, wait?: TakeWait): Promise<Taken | null> {
    this.#requireRunning();
    return this.#take.take(calls.takeParts(request, wait));
  }

  /** One call per partition, each to its owner (checked whole first: a malformed item sends nothing). */
  async submitBatch(requests: readonly SubmitRequest[]): Promise<BatchAnswer<'ticket', Ticket>[]> {
    this.#requireRunning();
    const fields = calls.submitBatchRequests(requests);
    return this.#perPartition(fields, (item) => ({ tenant: item.tenant, thread: item.thread }), calls.submitBatchCall, itemRefused);
  }

  /** A round over the nodes, as take's: the first node that leases anything answers (one call never holds leases of two nodes). */
  async takeStarted(request: StartRequest): Promise<Started[]> {
    this.#requireRunning();
    return this.#take.takeStarted(calls.takeStartedCall(request));
  }

  /** One call per partition, each to its owner (checked whole first: a malformed item sends nothing). */
  async closeBatch(closes: readonly LeaseClose[]): Promise<BatchAnswer<'entry', Entry>[]> {
    this.#requireRunning();
    return this.#perPartition(calls.closeBatchRequests(closes), byEntry, calls.closeBatchCall, itemRefused);
  }

  /** A Worker's closes (in-process.ts): as closeBatch, answered without the closed entries. */
  async [closeRuns](closes: readonly LeaseClose[]): Promise<(RunlogError | null)[]> {
    this.#requireRunning();
    return this.#perPartition(calls.runCloseRequests(closes), byEntry, calls.closeRunsCall, (error) => error);
  }

  /**
   * Splits `items` by partition, sends each share as one call to its owner, and answers in the
   * items' order. The shares go to different nodes, so they do not fail together: a share
   * refused or failed (its node refused the whole share, say its answer too large; or it stayed
   * unreachable, or its answer was lost) answers each of its items with that error (`refused`),
   * while the items of the shares that were carried out answer what they did. Rejecting the
   * call instead would hide the shares that were written: the caller, told nothing was done,
   * would submit them again. When every share failed the call rejects, as one server's would.
   */
  async #perPartition<I, A>(
    items: readonly I[],
    route: (item: I) => Route,
    callOf: (share: I[]) => Call<A[]>,
    refused: (error: RunlogError) => A,
  ): Promise<A[]> {
    const shares = new Map<number, number[]>();
    items.forEach((item, i) => {
      const partition = partitionOfRoute(route(item), this.map.partitions);
      shares.set(partition, [...(shares.get(partition) ?? []), i]);
    });
    const answers: A[] = new Array(items.length);
    const failures: unknown[] = [];
    await Promise.all(
      [...shares].map(async ([partition, indexes]) => {
        try {
          const answered = await this.#routed(callOf(indexes.map((i) => items[i]!)));
          indexes.forEach((index, j) => (answers[index] = answered[j]!));
        } catch (error) {
          failures.push(error);
          if (!(error instanceof RunlogError)) return;
          const ofShare = shareFailure(error, partition, indexes);
          for (const index of indexes) answers[index] = refused(ofShare);
        }
      }),
    );
    const unexpected = failures.find((error) => !(error instanceof RunlogError));
    if (unexpected !== undefined) throw unexpected;
    if (failures.length === shares.size) throw failures[0];
    return answers;
  }

  async takeEntry(tenant: string, entryId: string, request: Omit<TakeRequest, 'agents'>): Promise<Taken | null> {
    this.#requireRunning();
    return this.#routed(calls.takeEntryCall(tenant, entryId, request));
  }

  async extend(lease: Lease, ttlMs: number): Promise<Lease> {
    this.#requireRunning();
    return this.#routed(calls.extendCall(lease, ttlMs));
  }

  async startAttempt(lease: Lease, runId: string): Promise<Attempt> {
    this.#requireRunning();
    return this.#routed(calls.startAttemptCall(lease, runId));
  }

  async yield(lease: Lease, request: YieldRequest): Promise<boolean> {
    this.#requireRunning();
    return this.#routed(calls.yieldCall(lease, request));
  }

  async close(lease: Lease, request: CloseRequest): Promise<Entry> {
    this.#requireRunning();
    return this.#routed(calls.closeCall(lease, request));
  }

  async cancel(tenant: string, entryId: string, reason?: string): Promise<Entry> {
    this.#requireRunning();
    return this.#routed(calls.cancelCall(tenant, entryId, reason));
  }

  async entry(tenant: string, entryId: string): Promise<Entry> {
    this.#requireRunning();
    return this.#routed(calls.entryCall(tenant, entryId));
  }

  async openEntries(tenant: string, thread: string): Promise<Entry[]> {
    this.#requireRunning();
    return this.#routed(calls.openEntriesCall(tenant, thread));
  }

  async deleteThread(tenant: string, thread: string): Promise<number> {
    this.#requireRunning();
    return this.#routed(calls.deleteThreadCall(tenant, thread));
  }

  /**
   * Each node prunes the partitions it serves, one node after the other, each up to what the
   * limit leaves: the sum (at most `limit`; oldest close first within a node, not across nodes).
   */
  async prune(ticketLifetimeMs: number, limit: number): Promise<number> {
    this.#requireRunning();
    calls.pruneCall(ticketLifetimeMs, limit); // checks the arguments before any request
    let pruned = 0;
    for (const owner of this.map.owners()) {
      if (pruned >= limit) break;
      pruned += await this.nodes.get(owner).send(calls.pruneCall(ticketLifetimeMs, limit - pruned));
    }
    return pruned;
  }

  /**
   * Long-polls the entry's owner in chunks of at most 60 s (as a single server's client). A
   * partition handed over during the wait fails the wait there with NotOwner: the chunk is
   * asked again of the new owner (followed, or the map read again), for the time left.
   */
  async awaitClosed(tenant: string, entryId: string, options: AwaitOptions = {}): Promise<Entry | null> {
    this.#requireRunning();
    const { signal, timeoutMs } = awaitOptions(options);
    partitionOfRoute(calls.closedCall(tenant, entryId, 0, signal).route!, this.map.partitions);
    const deadline = timeoutMs === undefined ? Infinity : performance.now() + timeoutMs;
    for (;;) {
      const waitMs = Math.max(0, Math.min(MAX_WAIT_MS, Math.ceil(deadline - performance.now())));
      const entry = await this.#routed(calls.closedCall(tenant, entryId, waitMs, signal));
      if (entry !== null) return entry;
      if (performance.now() >= deadline) return null;
    }
  }

  /** The earliest over the nodes. */
  async nextDueAt(agents: readonly string[], tenants?: readonly string[]): Promise<number | null> {
    this.#requireRunning();
    const answers = await this.#everyOwner(calls.nextDueCall(agents, tenants));
    const due = [...answers.values()].filter((at) => at !== null);
    return due.length === 0 ? null : Math.min(...due);
  }

  onWork(listener: () => void): () => void {
    return this.nodes.onWork(listener);
  }

  /** Each node counts the partitions it serves: the sum (the longest wait and run: the greatest), warnings by code summed. */
  async metrics(): Promise<QueueMetrics> {
    this.#requireRunning();
    const answers = await this.#everyOwner(calls.metricsCall);
    const counters = emptyMetrics();
    const total: QueueMetrics = { ...counters, open: 0, warnings: {} };
    for (const metrics of answers.values()) {
      addMetrics(counters, metrics);
      total.open += metrics.open;
      for (const [code, count] of Object.entries(metrics.warnings)) total.warnings[code] = (total.warnings[code] ?? 0) + count;
    }
    return { ...total, ...counters };
  }

  /** Each partition as its owner tells it; `unowned` while the group has not assigned it. */
  async health(): Promise<PartitionHealth[]> {
    this.#requireRunning();
    const answers = await this.#everyOwner(calls.healthCall);
    return Array.from({ length: this.map.partitions }, (_, partition) => {
      const owner = this.map.ownerOf(partition);
      const told = owner === null ? undefined : answers.get(owner)?.find((health) => health.partition === partition);
      return told ?? { partition, mode: 'unowned' };
    });
  }

  /** The store clock, followed from every node's answers (the greatest reading: it never runs backwards). */
  now(): number {
    return this.clock.now();
  }

  /** Ends the client's requests, long-polls and work streams on every node (they fail Stopped); later calls are Stopped. */
  async stop(): Promise<void> {
    if (this.#stopping.signal.aborted) return;
    this.#stopping.abort(new RunlogError('Stopped', 'the client was stopped'));
    this.#maps.stop();
    await this.nodes.stop();
  }

  /** Sends `call` to the owner of its partition, following NotOwner and trying again as the top says. */
  async #routed<T>(call: Call<T>): Promise<T> {
    const partition = partitionOfRoute(call.route!, this.map.partitions);
    const backoff = this.#backoff(call.repeatable, call.signal);
    let hops = 0;
    for (;;) {
      const owner = this.map.ownerOf(partition);
      try {
        if (owner === null) throw unassigned(partition);
        return await this.nodes.get(owner).send(call);
      } catch (error) {
        this.#requireRunning();
        const next = isRunlogError(error, 'NotOwner') && error.owner !== undefined ? nodeUrl(error.owner) : null;
        if (next !== null && next !== owner && hops < this.map.partitions) {
          hops++;
          this.map.hint(partition, next);
          this.#maps.readSoon();
          continue;
        }
        await backoff.after(error);
        hops = 0;
        await this.#maps.read();
      }
    }
  }

  /**
   * Sends `call` to every node that owns a partition; answers each one's answer by its url,
   * for the owners of the map as it is at the end. A node that fails it is asked again (or
   * the partition's new owner is) by the same rules as a routed call.
   */
  async #everyOwner<T>(call: Call<T>): Promise<Map<string, T>> {
    const backoff = this.#backoff(call.repeatable, call.signal);
    const answers = new Map<string, T>();
    for (;;) {
      const owners = this.map.owners();
      const missing = owners.filter((owner) => !answers.has(owner));
      if (missing.length === 0) return new Map(owners.map((owner) => [owner, answers.get(owner)!]));
      const settled = await Promise.allSettled(missing.map((owner) => this.nodes.get(owner).send(call)));
      const failures: unknown[] = [];
      settled.forEach((result, i) =>
        result.status === 'fulfilled' ? answers.set(missing[i]!, result.value) : failures.push(result.reason),
      );
      if (failures.length === 0) continue;
      this.#requireRunning();
      await backoff.after(failures.find((failure) => !mayRetryInCluster(failure, call.repeatable)) ?? failures[0]);
      await this.#maps.read();
    }
  }

  #backoff(repeatable: Repeatable, signal: AbortSignal | undefined): Backoff {
    const { firstMs, maxMs, forMs } = this.settings.retry;
    return new Backoff({
      firstMs,
      maxMs,
      forMs,
      retriable: (error) => mayRetryInCluster(error, repeatable),
      signal: signal === undefined ? this.#stopping.signal : AbortSignal.any([this.#stopping.signal, signal]),
    });
  }

  #requireRunning(): void {
    if (this.#stopping.signal.aborted) throw new RunlogError('Stopped', 'the client was stopped');
  }
}

/** The map names no owner for the partition: the group is assigning it (retriable, after a pause and a fresh map). */
function unassigned(partition: number): RunlogError {
  return new RunlogError('NotOwner', `no node of the cluster serves partition ${partition} yet (the group is assigning it)`);
}

/** A close's route: its entry's partition. */
const byEntry = (close: LeaseClose): Route => ({ entryId: close.lease.entryId });

/** A batch item's answer when its share failed whole. */
const itemRefused = (error: RunlogError): { error: RunlogError } => ({ error });

/**
 * A share's failure as its items answer it: the same code and retriability, its message saying
 * which items the share held (the node counted them from 0 within the share).
 */
function shareFailure(error: RunlogError, partition: number, indexes: readonly number[]): RunlogError {
  const items = indexes.length > 10 ? `${indexes.slice(0, 10).join(', ')}, ...` : indexes.join(', ');
  const message = `the items of partition ${partition} (${items}) went to its owner as one call, which failed whole: ${error.message}`;
  return new RunlogError(error.code, message, {
    cause: error,
    retriable: error.retriable,
    ...(error.owner === undefined ? {} : { owner: error.owner }),
  });
}
