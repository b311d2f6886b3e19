/**
 * The events of runlog: one per state change. Each carries the tenant, the thread,
 * the entry id and `at`, the store-clock time (epoch ms) the partition's writer stamped.
 *
 * These TypeScript shapes mirror `schemas/*.avsc` (the public contract); the codec
 * maps between the two. Bytes are `Uint8Array`; absent optional values are `null`
 * (Avro unions with null), never `undefined`.
 */

export interface EventBase {
  tenant: string;
  thread: string;
  entryId: string;
  /** Store-clock time, epoch ms. */
  at: number;
}

export type Strategy = 'enqueue' | 'reject';

export interface Submitted extends EventBase {
  type: 'Submitted';
  /** Per-partition sequence number of this entry; entry ids are derived from it, never reused. */
  seq: number;
  agent: string;
  input: Uint8Array;
  key: string | null;
  strategy: Strategy;
  priority: number;
  notBefore: number | null;
  deadline: number | null;
  maxAttempts: number;
  metadata: Record<string, string>;
}

export interface Leased extends EventBase {
  type: 'Leased';
  holder: string;
  epoch: number;
  expiresAt: number;
  /** Attempts handed back unfinished so far (the entry's whole mutable state rides on each state record). */
  deferredAttempts: number;
}

export interface LeaseExtended extends EventBase {
  type: 'LeaseExtended';
  holder: string;
  epoch: number;
  expiresAt: number;
  /** Attempts handed back unfinished so far (the entry's whole mutable state rides on each state record). */
  deferredAttempts: number;
}

export interface AttemptStarted extends EventBase {
  type: 'AttemptStarted';
  runId: string;
  /** 1-based attempt number of this entry. */
  attempt: number;
  /** Epoch of the lease the attempt runs under. */
  epoch: number;
}

export type YieldKind = 'defer' | 'retry';

export interface Yielded extends EventBase {
  type: 'Yielded';
  /** Epoch of the lease given back (so a compacted log still knows the last epoch). */
  epoch: number;
  kind: YieldKind;
  error: string | null;
  /** Not takeable before this store-clock time (retry backoff); null: at once. */
  notBefore: number | null;
  /** Attempts handed back unfinished so far, this one included when a defer cuts short an attempt of this lease. */
  deferredAttempts: number;
}

/** Cancels an open entry: it closes `cancelled` at once; a running attempt's lease stops being current. */
export interface CancelRequested extends EventBase {
  type: 'CancelRequested';
  reason: string | null;
  /** Attempts handed back unfinished before the entry closed (its latest state's count; this record replaces the state record under compaction). Version 2; 0 from version 1. */
  deferredAttempts: number;
}

export type Outcome = 'succeeded' | 'failed' | 'cancelled' | 'expired' | 'threadDeleted';

export interface Closed extends EventBase {
  type: 'Closed';
  outcome: Outcome;
  result: Uint8Array | null;
  error: string | null;
  /** Attempts handed back unfinished before the entry closed (its latest state's count; this record replaces the state record under compaction). Version 2; 0 from version 1. */
  deferredAttempts: number;
}

/** The thread was deleted: this open entry of it closes `threadDeleted`. One event per open entry. */
export interface ThreadDeleted extends EventBase {
  type: 'ThreadDeleted';
  /** Attempts handed back unfinished before the entry closed (its latest state's count; this record replaces the state record under compaction). Version 2; 0 from version 1. */
  deferredAttempts: number;
}

/**
 * Retention: the entries named were pruned. Written under one fixed key per partition
 * (so compaction keeps the latest), it also carries `issuedThrough`, the highest entry
 * sequence ever issued in the partition, so ids are never reused after everything is
 * pruned and compacted away. Its `entryId`, `tenant` and `thread` are empty.
 */
export interface EntriesPruned extends EventBase {
  type: 'EntriesPruned';
  entryIds: string[];
  issuedThrough: number;
}

/**
 * The partition's ticket key (src/queue/ticket-id.ts): written once, with the first
 * submission the partition takes, under one fixed key that is never tombstoned, so that
 * after every entry is pruned and compacted away an issued id still reads TicketExpired
 * and a forged one TicketNotFound. Its `entryId`, `tenant` and `thread` are empty.
 */
export interface TicketKeyCreated extends EventBase {
  type: 'TicketKeyCreated';
  /** 16 random bytes, the AES-128 key of the partition's ticket ids. */
  secret: Uint8Array;
  /** The highest sequence issued before the key, under plain `<partition>-<seq>` ids (0: none). */
  legacyThrough: number;
}

/**
 * The answer to one command of the commands topic (command-types.ts), written in the same
 * append as the command's events and the commit of its offset, under `r/<tenant>/<requestId>`
 * (keys.ts). `entryId`: the entry submitted or cancelled (null when a refusal names none);
 * `created`: the first answer that changed something; `code`/`message`: a refusal's.
 */
export interface CommandAnswered {
  type: 'CommandAnswered';
  tenant: string;
  thread: string;
  entryId: string | null;
  /** Store-clock time, epoch ms. */
  at: number;
  requestId: string;
  command: AnsweredCommand;
  created: boolean;
  code: string | null;
  message: string | null;
}

export type AnsweredCommand = 'submit' | 'cancel';

export type RunlogEvent =
  | Submitted
  | Leased
  | LeaseExtended
  | AttemptStarted
  | Yielded
  | CancelRequested
  | Closed
  | ThreadDeleted
  | EntriesPruned
  | TicketKeyCreated
  | CommandAnswered;

export type EventType = RunlogEvent['type'];

export const EVENT_TYPES: readonly EventType[] = [
  'Submitted',
  'Leased',
  'LeaseExtended',
  'AttemptStarted',
  'Yielded',
  'CancelRequested',
  'Closed',
  'ThreadDeleted',
  'EntriesPruned',
  'TicketKeyCreated',
  'CommandAnswered',
];
