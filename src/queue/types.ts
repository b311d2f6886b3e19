/**
 * The public shapes of the RunQueue API. Times are store-clock epoch ms (`...At`),
 * durations are ms (`...Ms`). Bytes are Uint8Array; a string input is taken as UTF-8.
 */
import type { RunlogError } from '../errors.ts';
import type { RunlogWarning } from '../warnings.ts';
import type { LogConfig } from '../log/event-log.ts';
import type { Outcome, Strategy } from '../events/types.ts';
import type { MetricCounters } from '../../projections/metrics.ts';

export type { Outcome, Strategy };

/** A clock source: the wall clock answers epoch ms, a monotonic clock ms from any origin. Tests pass fake ones. */
export type Clock = () => number;

export interface SubmitRequest {
  tenant: string;
  thread: string;
  agent: string;
  input: Uint8Array | string;
  /** Idempotency key, scoped to (tenant, thread): the same key names the same entry. */
  key?: string;
  /** 'enqueue' (default) queues behind open entries; 'reject' refuses with ThreadBusy if the thread has one. */
  strategy?: Strategy;
  /** Higher runs first across threads (default 0). */
  priority?: number;
  /** Not takeable before this time, epoch ms by the caller's wall clock (see the store clock in README). */
  notBefore?: number;
  /** Start deadline, epoch ms by the caller's wall clock: an entry not started by then closes `expired`, unrun. */
  deadline?: number;
  /** Attempts before a worker parks the entry (closes it failed). Default 10. */
  maxAttempts?: number;
  metadata?: Record<string, string>;
}

export interface Ticket {
  tenant: string;
  thread: string;
  entryId: string;
  /** False when the submission key named an existing entry. */
  created: boolean;
}

export interface TakeRequest {
  agents: readonly string[];
  /** Only entries of these tenants (default: of any tenant). */
  tenants?: readonly string[];
  holder: string;
  ttlMs: number;
}

/** What a lease is asked for with: takeEntry's request (a take's without agents and tenants). */
export type LeaseTerms = Pick<TakeRequest, 'holder' | 'ttlMs'>;

/** Who may work on an entry until when. Only the current lease (highest epoch, unexpired) may act. */
export interface Lease {
  tenant: string;
  thread: string;
  entryId: string;
  agent: string;
  holder: string;
  epoch: number;
  expiresAt: number;
}

/** What `take` answers: the lease and the entry it is on. */
export interface Taken {
  lease: Lease;
  entry: Entry;
}

export interface Attempt {
  runId: string;
  attempt: number;
  epoch: number;
  startedAt: number;
}

/**
 * What takeStarted asks: a take of up to `max` entries (for a pool's free slots), each leased
 * and its attempt started in one command, so the attempt is durable before any handler runs.
 */
export interface StartRequest extends TakeRequest {
  /** Most entries to take (default 1, at most 10,000, as many items as a batch). */
  max?: number;
  /**
   * Caps each entry's own maxAttempts (a worker's maxAttempts option): an entry with no attempt
   * left is leased but not started (its `attempt` is null), for the caller to park.
   */
  maxAttempts?: number;
}

/** What takeStarted answers per entry: its lease, the entry (the attempt included) and the attempt, or null when none was left. */
export interface Started extends Taken {
  attempt: Attempt | null;
}

/** One close of closeBatch: a lease and what to close its entry with. */
export interface LeaseClose {
  lease: Lease;
  request: CloseRequest;
}

/** A batch item's answer: its value, or the refusal of that item alone (nothing of it written). */
export type BatchAnswer<K extends string, T> = { [key in K]: T } | { error: RunlogError };

export type YieldRequest = { kind: 'defer' } | { kind: 'retry'; error: string; delayMs?: number };

export type CloseStatus = 'succeeded' | 'failed' | 'cancelled';

export interface CloseRequest {
  status: CloseStatus;
  result?: Uint8Array | string;
  error?: string;
}

export interface Entry {
  entryId: string;
  tenant: string;
  thread: string;
  agent: string;
  input: Uint8Array;
  key: string | null;
  priority: number;
  /** When the entry may next be taken (submission's notBefore, or a retry's backoff); null: at once. */
  notBefore: number | null;
  deadline: number | null;
  maxAttempts: number;
  metadata: Record<string, string>;
  submittedAt: number;
  status: 'open' | 'closed';
  /** The latest lease (it may have expired by the store clock); null when none is held. */
  lease: Lease | null;
  attempts: Attempt[];
  /** Attempts handed back unfinished (a defer after the attempt started): they do not count toward maxAttempts. */
  deferredAttempts: number;
  outcome: Outcome | null;
  result: Uint8Array | null;
  error: string | null;
  closedAt: number | null;
}

/** The fold's counters (projections/metrics.ts), summed over partitions, and what the queue knows now. */
export interface QueueMetrics extends MetricCounters {
  /** Open entries now. */
  open: number;
  /**
   * Warnings reported since open, by code (see RunQueueOptions.onWarning): RUNLOG_TORN_TAIL
   * (a torn last frame cut when the log opened), RUNLOG_STALE_LOCK, ...
   */
  warnings: Record<string, number>;
}

/**
 * A partition's mode (RunQueue.health()): `serving` commands; `draining` (an append failed,
 * the appends in flight settle) then `rebuilding` from the log; `down` for good (fenced,
 * locked by another writer, or its log damaged); `stopped` with the queue. A cluster node's
 * queue (ownership 'assigned') also has `unowned` (another node serves it), `acquiring` (being
 * claimed and replayed) and `releasing` (handed over: the appends in flight settle).
 */
export type PartitionMode = 'serving' | 'draining' | 'rebuilding' | 'down' | 'stopped' | 'unowned' | 'acquiring' | 'releasing';

export interface PartitionHealth {
  partition: number;
  mode: PartitionMode;
  /**
   * Why it does not serve. `down`: the error it is down for, which every command on it gets.
   * `rebuilding`: why the last attempt failed (absent before the first failure).
   */
  error?: RunlogError;
}

export interface Capacity {
  /** Most open entries one tenant may have. */
  perTenant?: number;
  /** Most open entries in the whole queue. */
  total?: number;
}

/** The retention sweep: every `everyMs`, expire overdue entries and prune closed ones past their lifetime. */
export interface Retention {
  /** How long a closed entry stays readable (store clock). */
  ticketLifetimeMs: number;
  /** How often the sweep runs (real time; default 60 s). */
  everyMs?: number;
  /** Most entries one sweep prunes (default 10,000). */
  limit?: number;
}

export interface RunQueueOptions {
  log: LogConfig;
  /**
   * Partition count, fixed for the life of a log. Default: 8 on memory; on a file log or Kafka
   * topic the count it was created with, or 1 for a new one (see DEFAULT_FILE_PARTITIONS,
   * DEFAULT_KAFKA_PARTITIONS).
   */
  partitions?: number;
  /** The wall clock, epoch ms (default Date.now). Given alone, it is the monotonic clock too. */
  clock?: Clock;
  /** A clock that is never stepped, ms from any origin (default performance.now; `clock` when only that is given). */
  monotonicClock?: Clock;
  /** How far the wall may move against the monotonic clock (plus 500 ppm of the time between readings, judged since store time last agreed with the wall) before it counts as a step (default 1,000 ms). */
  clockStepToleranceMs?: number;
  capacity?: Capacity;
  /** Largest input or result accepted, bytes (default 1 MiB). */
  maxInputBytes?: number;
  /** Runs the retention sweep periodically when given; `RunQueue.sweep()` runs it on demand. */
  retention?: Retention;
  /**
   * Told of trouble repaired or worked around (a torn tail cut on open, a stale lock taken
   * over, a failed sweep), with a stable code (RUNLOG_...). Default: process.emitWarning.
   * Counted by code in `metrics().warnings`.
   */
  onWarning?: (warning: RunlogWarning) => void;
  /**
   * 'all' (default): the queue claims every partition of its log when it opens. 'assigned':
   * it claims none; a cluster node (src/cluster) calls acquire()/release() as its consumer
   * group assigns partitions, and a Fenced append releases a partition instead of downing it.
   */
  ownership?: 'all' | 'assigned';
  /**
   * When each partition's view is snapshotted (file log: beside it, under `snapshots/`), so
   * that opening replays only the records after the latest valid snapshot: after
   * `everyRecords` records (default 250,000), every `everyMs` while anything changed
   * (default 600,000), and on stop. `false`: never (snapshots already there are still read).
   */
  snapshots?: { everyRecords?: number; everyMs?: number } | false;
  /**
   * Bytes of closed entries kept whole in memory (an LRU cache; default 32 MiB, 0 allowed).
   * The queue keeps only a small index row per closed entry; entry() of one not cached
   * reads its records back from the log.
   */
  closedCacheBytes?: number;
}

export interface AwaitOptions {
  signal?: AbortSignal;
  timeoutMs?: number;
}

/** The RunQueue API (src/queue/run-queue.ts implements it). */
export interface RunQueueApi {
  submit(request: SubmitRequest): Promise<Ticket>;
  take(request: TakeRequest): Promise<Taken | null>;
  /**
   * Leases one named entry now, if it is the head of its thread and no current lease holds
   * it; its notBefore (delay, retry backoff) is not waited for. Null otherwise. For running
   * a pending entry in a caller's context (the worker's ensureFresh).
   */
  takeEntry(tenant: string, entryId: string, request: LeaseTerms): Promise<Taken | null>;
  /**
   * Submits many entries: checked whole first (a malformed item is InvalidArgument naming it,
   * and nothing is written), then decided in order, one append per partition. Answers per
   * item its ticket, or its own refusal (ThreadBusy, QueueFull, SubmissionKeyReused, a record
   * too large), with nothing of that item written.
   */
  submitBatch(requests: readonly SubmitRequest[]): Promise<BatchAnswer<'ticket', Ticket>[]>;
  /**
   * Leases up to `max` of the best takeable heads (as take, one after the other) and starts an
   * attempt of each (a run id the queue draws) in the same command: the lease and the attempt
   * are durable together, before the answer. An entry with no attempt left (its maxAttempts,
   * or the request's cap) is leased unstarted. Empty when nothing is takeable.
   */
  takeStarted(request: StartRequest): Promise<Started[]>;
  extend(lease: Lease, ttlMs: number): Promise<Lease>;
  startAttempt(lease: Lease, runId: string): Promise<Attempt>;
  /** Gives the entry back without closing it. A stale lease changes nothing (answers false). */
  yield(lease: Lease, request: YieldRequest): Promise<boolean>;
  close(lease: Lease, request: CloseRequest): Promise<Entry>;
  /**
   * Closes many entries under their leases, one append per partition: checked whole first (a
   * malformed item is InvalidArgument naming it, nothing written), then each closed as close
   * does, or answered with its own refusal (LeaseNotCurrent, EntryClosed, ...).
   */
  closeBatch(closes: readonly LeaseClose[]): Promise<BatchAnswer<'entry', Entry>[]>;
  cancel(tenant: string, entryId: string, reason?: string): Promise<Entry>;
  entry(tenant: string, entryId: string): Promise<Entry>;
  openEntries(tenant: string, thread: string): Promise<Entry[]>;
  deleteThread(tenant: string, thread: string): Promise<number>;
  prune(ticketLifetimeMs: number, limit: number): Promise<number>;
  /** Resolves with the closed entry; null when timeoutMs passes first; rejects when signal aborts. */
  awaitClosed(tenant: string, entryId: string, options?: AwaitOptions): Promise<Entry | null>;
  /**
   * The earliest store-clock time something becomes takeable for these agents (delay, backoff,
   * lease expiry), or null; of these tenants only when given (as take's `tenants`). A time
   * not after now when something is takeable already.
   */
  nextDueAt(agents: readonly string[], tenants?: readonly string[]): Promise<number | null>;
  /**
   * Registers a listener called whenever an entry may have become takeable now: a microtask after the command that
   * made it is decided (its events folded, its append on its way); a take then answers once its own append, which
   * follows that one, is durable.
   */
  onWork(listener: () => void): () => void;
  metrics(): Promise<QueueMetrics>;
  /** Each partition's mode, and why one does not serve. */
  health(): Promise<PartitionHealth[]>;
  now(): number;
  stop(): Promise<void>;
}
