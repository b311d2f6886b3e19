/** The public shapes of the worker runtime. */
import type { Entry } from '../queue/types.ts';

/** What a handler gets for one run. */
export interface HandlerContext {
  entry: Entry;
  input: Uint8Array;
  /** 1-based number of this attempt of the entry. */
  attempt: number;
  runId: string;
  /**
   * Aborts when the worker stops, the lease is lost or the entry is cancelled; return promptly then.
   * A getter (the signal is made on first read): destructure it or read `context.signal`; a spread copy lacks it.
   */
  signal: AbortSignal;
}

export type HandlerResult = Uint8Array | string | undefined;

/**
 * Does the work of one entry. It must be idempotent: an entry can run more than once (a
 * worker may die after the work but before recording it). Throwing or rejecting is a failed
 * attempt; the value returned is the entry's result.
 */
// eslint-disable-next-line @typescript-eslint/no-invalid-void-type -- a handler with nothing to answer returns nothing
export type Handler = (context: HandlerContext) => HandlerResult | void | Promise<HandlerResult | void>;

/** How one run ended. */
export type RunOutcome =
  /** Closed succeeded with the handler's result. */
  | 'succeeded'
  /** A failed attempt, given back with a retry delay. */
  | 'retried'
  /** Closed failed after its last allowed attempt (or found with none left). */
  | 'parked'
  /** The lease was lost or the entry cancelled: nothing of the run was recorded. */
  | 'lost'
  /** Cut short by stopping: given back at once, not a failed attempt. */
  | 'deferred'
  /** The handler did not settle within the grace period after its signal aborted. */
  | 'abandoned';

/** Told to the `onEvent` option: what the worker did, for logs and tests. */
export type WorkerEvent =
  | { type: RunOutcome; entryId: string; agent: string; attempt: number; error?: string }
  | { type: 'renewed'; entryId: string; expiresAt: number }
  | { type: 'enqueued'; entryId: string; agent: string }
  | { type: 'error'; error: unknown; context: string };

/** What the `logger` option is told about (report.ts): the runs and trouble a person should see. */
export type WorkerLogKind = 'attempt-failed' | 'parked' | 'abandoned' | 'lease-lost' | 'worker-error';

/** One record for the `logger` option; at most 10 per kind a minute (store clock), the rest counted in `suppressed`. */
export interface WorkerLogRecord {
  level: 'warn' | 'error';
  kind: WorkerLogKind;
  /** The worker's holder name. */
  holder: string;
  /** One line for a person. */
  message: string;
  entryId?: string;
  agent?: string;
  attempt?: number;
  /** The recorded error text (a failed attempt or parking) or the worker error, described. */
  error?: string | null;
  /** Records of this kind dropped by the rate limit before this one (or, at stop, not yet told). */
  suppressed?: number;
}

/** Fake time goes through this; the default is the global timers. */
export interface Timers {
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export interface WorkerOptions {
  /**
   * Handlers running at once on this worker (default 4). A run's slot is free once its handler
   * settles, while its outcome is made durable; at most as many more runs record theirs at once.
   */
  concurrency?: number;
  /** Lease length; a run renews it every half lease (default 2 min). */
  leaseMs?: number;
  /** How long an idle run waits when nothing wakes it sooner (default 1 s). */
  pollMs?: number;
  /** Caps every entry's own maxAttempts (default: no cap). */
  maxAttempts?: number;
  /** The delay before the next run after the attempt'th failed (default 1 s doubling to 10 min). */
  backoff?: (attempt: number) => number;
  /** Names this worker's leases (default: host name, process id and a random suffix). */
  holder?: string;
  /** How long stopping or a lost lease waits for a handler to settle after aborting it (default 10 s). */
  graceMs?: number;
  /** The tenant periodic entries are submitted under (default 'runlog'). */
  periodicTenant?: string;
  /**
   * Takes only entries of these tenants (default: of any tenant), as take's `tenants`: the
   * pool, runDue and idleness look at these tenants only, and ensureFresh refuses another.
   * With handleEvery, it must include periodicTenant.
   */
  tenants?: readonly string[];
  timers?: Timers;
  /** Every event, for logs and tests (default: none). */
  onEvent?: (event: WorkerEvent) => void;
  /**
   * Told about failed attempts, parked, abandoned and lost runs and the worker's own
   * errors, rate-limited per kind (default: one line each on stderr). `() => {}` silences it.
   */
  logger?: (record: WorkerLogRecord) => void;
}

export interface WorkerMetricsSnapshot {
  /** Entries this worker submitted (periodic work). */
  enqueued: number;
  /** Runs that recorded an outcome: succeeded, retried or parked. */
  processed: number;
  succeeded: number;
  /** Failed attempts (retried or parked after failing). */
  failed: number;
  retried: number;
  /**
   * Runs whose lease was lost (taken over after it expired, or the entry cancelled or
   * closed meanwhile): their late result was refused. Not the queue's `expired`, which
   * counts entries whose start deadline passed unrun.
   */
  leasesLost: number;
  parked: number;
  /** Runs cut short by stopping and handed back. */
  deferred: number;
  /** Runs given up on after the grace period. */
  abandoned: number;
  inFlight: number;
  totalWaitMs: number;
  totalExecMs: number;
}
