/**
 * What the queue can be asked to do, as plain data, and what `decide` (decide.ts) answers.
 *
 * A command carries everything its decision needs that the partition's view cannot know by
 * itself: open counts across partitions, the queue's capacity, a ticket secret freshly drawn
 * by the shell. Time is `decide`'s third argument. So a decision is a pure function of
 * (view, command, now), and a test can state one without a log (test/queue/decider/).
 */
import type { RunlogError } from '../errors.ts';
import type {
  AnsweredCommand,
  AttemptStarted,
  CancelRequested,
  Closed,
  CommandAnswered,
  EntriesPruned,
  LeaseExtended,
  Leased,
  Outcome,
  RunlogEvent,
  Submitted,
  ThreadDeleted,
  Yielded,
} from '../events/types.ts';
import type { Capacity, Lease } from './types.ts';

/** A submission after validation: every field present. */
export type SubmissionFields = Omit<Submitted, 'type' | 'entryId' | 'seq' | 'at'>;

export type YieldFields = Pick<Yielded, 'kind' | 'error'> & { delayMs: number | null };

export type CloseFields = { outcome: Outcome; result: Uint8Array | null; error: string | null };

/** Open entries across every partition, counted by the shell when a submission is decided (only those the capacity limits; else 0). */
export interface OpenCounts {
  tenant: number;
  total: number;
}

export type Command =
  /** `freshSecret`: a new ticket key the shell drew because the partition has none yet (else null). */
  | { type: 'Submit'; submission: SubmissionFields; capacity: Capacity; counts: OpenCounts; freshSecret: Uint8Array | null }
  /**
   * Lease the head the router chose for a take of `agents` and `tenants` (null: any tenant);
   * it found it takeable in the head index, and decide holds it to the same rules.
   */
  | { type: 'Lease'; entryId: string; holder: string; ttlMs: number; agents: readonly string[]; tenants: readonly string[] | null }
  /**
   * takeStarted's lease of the head the router chose (as Lease), and the start of an attempt
   * under it, run id `runId` (drawn by the shell), unless no attempt is left: `attemptCap`
   * caps the entry's maxAttempts (null: no cap).
   */
  | {
      type: 'LeaseStart';
      entryId: string;
      holder: string;
      ttlMs: number;
      agents: readonly string[];
      tenants: readonly string[] | null;
      runId: string;
      attemptCap: number | null;
    }
  /** Lease one named entry of `tenant` now (takeEntry): its notBefore is not waited for. */
  | { type: 'LeaseEntry'; tenant: string; entryId: string; holder: string; ttlMs: number }
  | { type: 'Extend'; lease: Lease; ttlMs: number }
  | { type: 'StartAttempt'; lease: Lease; runId: string }
  | { type: 'Yield'; lease: Lease; request: YieldFields }
  | { type: 'Close'; lease: Lease; request: CloseFields }
  | { type: 'Cancel'; tenant: string; entryId: string; reason: string | null }
  | { type: 'DeleteThread'; tenant: string; thread: string }
  /** Close `expired` every entry of the partition whose start deadline passed unstarted. */
  | { type: 'Expire' }
  /**
   * Prune up to `limit` closed entries closed at or before `closedBy`, oldest close first, and
   * up to `answerLimit` (default 0) loose answers (projections/answers.ts) last answered by then.
   */
  | { type: 'Prune'; closedBy: number; limit: number; answerLimit?: number }
  /**
   * Answer a request of the commands topic (src/events/command-types.ts) exactly once: its
   * events and a CommandAnswered, or a CommandAnswered alone (a refusal, or a repeated request id).
   */
  | { type: 'Answer'; requestId: string; tenant: string; thread: string; request: Request };

/** A request of the commands topic, checked as far as the shell could: the command it asks for, or why it is refused. */
export type Request =
  | { kind: 'submit'; command: CommandOf<'Submit'> }
  | { kind: 'cancel'; command: CommandOf<'Cancel'> }
  | { kind: 'invalid'; command: AnsweredCommand; error: RunlogError };

export type CommandOf<T extends Command['type']> = Extract<Command, { type: T }>;

/** Append `events` in one append (the shell folds them at once and answers once durable). */
export type Append<Events extends RunlogEvent[]> = { kind: 'append'; events: Events };
/** A new entry (after the partition's TicketKeyCreated when it had no ticket key). */
export type Created = { kind: 'created'; events: RunlogEvent[]; entryId: string };
/** The submission's key names `entryId` already, with the same submission: nothing to append. */
export type Existing = { kind: 'existing'; events: never[]; entryId: string };
export type Leasing = { kind: 'leased'; events: [Leased] };
/** Leased and its attempt started, in one append. */
export type Starting = { kind: 'started'; events: [Leased, AttemptStarted] };
/** A lease asked for a head whose start deadline passed: it is closed expired instead, and not leased. */
export type ExpiredInstead = { kind: 'expired'; events: [Closed] };
/** Nothing changes, and that is no refusal: a stale yield, an entry that is not takeable, nothing due. */
export type Unchanged = { kind: 'unchanged'; events: never[] };
/**
 * The decision needs these closed entries whole, and the view holds only their tickets (a
 * submission key or run id hashes to them: projections/closed-tickets.ts): the shell reads
 * them (cache or log) and asks again with them (decide's `closed`).
 */
export type ReadFirst = { kind: 'read'; entryIds: string[] };
/** The command is refused; the shell throws `error`. */
export type Refused = { kind: 'refused'; error: RunlogError };
/** Entries pruned (EntriesPruned, empty when only answers are), and the keys of loose answers to tombstone with it. */
export type Pruning = { kind: 'append'; events: [EntriesPruned]; tombstones: readonly string[] };
/** A request answered: its events (none for a refusal or a repeat), the answer last. */
export type Answering = { kind: 'answered'; events: RunlogEvent[]; answer: CommandAnswered };

/** What each command may decide. */
export interface Decisions {
  Submit: Created | Existing | Refused | ReadFirst;
  Lease: Leasing | ExpiredInstead | Unchanged;
  LeaseStart: Starting | Leasing | ExpiredInstead | Unchanged;
  LeaseEntry: Leasing | ExpiredInstead | Unchanged | Refused;
  Extend: Append<[LeaseExtended]> | Refused;
  StartAttempt: Append<[AttemptStarted]> | Refused | ReadFirst;
  Yield: Append<[Yielded]> | Unchanged | Refused;
  Close: Append<[Closed]> | Refused;
  Cancel: Append<[CancelRequested]> | Refused;
  DeleteThread: Append<ThreadDeleted[]> | Unchanged;
  Expire: Append<Closed[]> | Unchanged;
  Prune: Pruning | Unchanged;
  Answer: Answering | ReadFirst;
}

export type DecisionOf<T extends Command['type']> = Decisions[T];
export type Decision = Decisions[Command['type']];
