/**
 * One entry as the view holds it. Mutable, owned by the fold; callers get copies
 * (src/queue/public-entry.ts). `version` changes on every change that moves the entry in or out
 * of the head index, so stale index items can be recognised and skipped.
 */
import type { Outcome, Submitted } from '../src/events/types.ts';
import type { HeadIndex, IndexedHead } from './head-index.ts';
import type { ThreadMember, ThreadState } from './thread-state.ts';
import { listOf, plainConstructor, type Mutable } from '../src/plain-objects.ts';

/** Shared by every entry without metadata or attempts (frozen: a stray write throws). */
const NO_METADATA: Record<string, string> = Object.freeze({});
const NO_ATTEMPTS: AttemptRecord[] = Object.freeze([]) as unknown as AttemptRecord[];
const NO_OFFSETS: number[] = Object.freeze([]) as unknown as number[];
/** V8 keeps a Uint8Array's bytes on its own heap up to 64 bytes (validation/bytes.ts): such an input is kept as it is. */
const ON_HEAP_INPUT = 64;

export interface LeaseState {
  holder: string;
  epoch: number;
  expiresAt: number;
}

/** One attempt started on the entry (an AttemptStarted event), never changed after. */
export interface AttemptRecord {
  readonly runId: string;
  readonly attempt: number;
  readonly epoch: number;
  readonly startedAt: number;
}

/** An entry's lease, as a Leased event grants it (made without an allocation site: src/plain-objects.ts). */
export const GrantedLease = plainConstructor(function (this: LeaseState, holder: string, epoch: number, expiresAt: number) {
  this.holder = holder;
  this.epoch = epoch;
  this.expiresAt = expiresAt;
});

/** An attempt, as an AttemptStarted event starts it (made without an allocation site: src/plain-objects.ts). */
export const StartedAttempt = plainConstructor(function (
  this: Mutable<AttemptRecord>,
  runId: string,
  attempt: number,
  epoch: number,
  startedAt: number,
) {
  this.runId = runId;
  this.attempt = attempt;
  this.epoch = epoch;
  this.startedAt = startedAt;
});

/**
 * What an entry holds once it is leased, run or closed. Apart from EntryState, so that an entry
 * waiting for its first lease (most of a backlog) holds one field for all of it, the shared
 * frozen WAITING, rather than nine fields of defaults: 64 bytes less per open entry.
 */
class RunState {
  lease: LeaseState | null = null;
  lastEpoch = 0;
  attempts: readonly AttemptRecord[] = NO_ATTEMPTS;
  deferredAttempts = 0;
  outcome: Outcome | null = null;
  result: Uint8Array | null = null;
  error: string | null = null;
  closedAt: number | null = null;
  attemptOffsets: readonly number[] = NO_OFFSETS;
}

const WAITING: RunState = Object.freeze(new RunState());

/** What a retired entry holds (EntryState.retire): its outcome and nothing else, one frozen RunState per outcome. */
const RETIRED: Readonly<Record<Outcome, RunState>> = {
  succeeded: retiredAs('succeeded'),
  failed: retiredAs('failed'),
  cancelled: retiredAs('cancelled'),
  expired: retiredAs('expired'),
  threadDeleted: retiredAs('threadDeleted'),
};

function retiredAs(outcome: Outcome): RunState {
  const run = new RunState();
  run.outcome = outcome;
  return Object.freeze(run);
}

/**
 * Fields are what the events say; the tenant, thread and agent strings are read through
 * the entry's thread and head index (shared, not a copy per entry), and `closed` from the
 * outcome: a replay holds every entry of the log, so each field saved counts.
 */
export class EntryState implements IndexedHead, ThreadMember {
  readonly entryId: string;
  readonly seq: number;
  /** The entry's thread in the view (saves building its id to look it up). */
  readonly threadState: ThreadState<EntryState>;
  /** The head index of the entry's agent (saves a lookup by agent per lease and yield). */
  readonly heads: HeadIndex<EntryState>;
  /**
   * The input's bytes (see `input`): the input itself when small, else the buffer it lies in, at
   * #inputOffset for #inputLength bytes (a view kept per entry costs ~96 bytes of heap).
   */
  #inputBytes: Uint8Array | ArrayBufferLike;
  #inputOffset: number;
  #inputLength: number;
  readonly key: string | null;
  readonly priority: number;
  readonly deadline: number | null;
  readonly maxAttempts: number;
  readonly metadata: Record<string, string>;
  readonly submittedAt: number;
  /** Not takeable before this time (submission's notBefore or a retry's backoff). */
  notBefore: number | null;
  /** Its leases, attempts and close (RunState): the shared WAITING until the first is written. */
  #run: RunState = WAITING;
  version = 0;
  /** Where its Submitted record lies in the log (-1 until the append holding it answers). */
  submittedOffset = -1;
  /** The number of the snapshot writing that wrote it, or kept it before a change (projections/open-threads-writing.ts); 0: none. */
  snapshotWritten = 0;

  /** A new entry of `thread`, indexed in `heads` when it is a head. */
  constructor(event: Submitted, thread: ThreadState<EntryState>, heads: HeadIndex<EntryState>) {
    this.entryId = event.entryId;
    this.seq = event.seq;
    this.threadState = thread;
    this.heads = heads;
    const input = event.input;
    // Up to ON_HEAP_INPUT bytes a Uint8Array may hold its bytes on V8's heap, and reading its buffer would move them off it.
    this.#inputBytes = input.byteLength <= ON_HEAP_INPUT ? input : input.buffer;
    this.#inputOffset = input.byteOffset;
    this.#inputLength = input.byteLength;
    this.key = event.key;
    this.priority = event.priority;
    this.deadline = event.deadline;
    this.maxAttempts = event.maxAttempts;
    this.metadata = isEmpty(event.metadata) ? NO_METADATA : event.metadata;
    this.submittedAt = event.at;
    this.notBefore = event.notBefore;
  }

  /** The submission's input: a view of its bytes, made at each read (the bytes are never copied). */
  get input(): Uint8Array {
    const bytes = this.#inputBytes;
    return bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes, this.#inputOffset, this.#inputLength);
  }

  /** The buffer its input lies in when V8 keeps it off its heap (more than 64 bytes), else null (no view made). */
  get inputBuffer(): ArrayBufferLike | null {
    const bytes = this.#inputBytes;
    return bytes instanceof Uint8Array ? null : bytes;
  }

  /**
   * Its input is now `copy` (the same bytes, elsewhere): a catch-up moves the inputs of the entries
   * it leaves open out of its decoder's shared slabs (src/projector/replay.ts).
   */
  moveInput(copy: Uint8Array): void {
    if (copy.byteLength !== this.#inputLength) throw new Error(`an input of ${this.#inputLength} bytes moved into ${copy.byteLength}`);
    this.#inputBytes = copy.byteLength <= ON_HEAP_INPUT ? copy : copy.buffer;
    this.#inputOffset = copy.byteOffset;
  }

  get lease(): LeaseState | null {
    return this.#run.lease;
  }

  set lease(lease: LeaseState | null) {
    if (lease !== null || this.#run.lease !== null) this.#running().lease = lease;
  }

  /** Highest lease epoch ever granted; the next lease gets lastEpoch + 1. */
  get lastEpoch(): number {
    return this.#run.lastEpoch;
  }

  set lastEpoch(epoch: number) {
    this.#running().lastEpoch = epoch;
  }

  /** Grown by addAttempt only: entries without attempts share one frozen array. */
  get attempts(): readonly AttemptRecord[] {
    return this.#run.attempts;
  }

  set attempts(attempts: readonly AttemptRecord[]) {
    this.#running().attempts = attempts;
  }

  /** Where attempt n's AttemptStarted lies, at n - 1 (-1 until known); shared while empty, like `attempts`. */
  get attemptOffsets(): readonly number[] {
    return this.#run.attemptOffsets;
  }

  set attemptOffsets(offsets: readonly number[]) {
    this.#running().attemptOffsets = offsets;
  }

  /** Attempts handed back unfinished (defer after startAttempt); they do not count toward maxAttempts. */
  get deferredAttempts(): number {
    return this.#run.deferredAttempts;
  }

  set deferredAttempts(count: number) {
    if (count !== this.#run.deferredAttempts) this.#running().deferredAttempts = count;
  }

  /** Set when the entry closes, never cleared: an entry is closed once it has an outcome. */
  get outcome(): Outcome | null {
    return this.#run.outcome;
  }

  set outcome(outcome: Outcome | null) {
    this.#running().outcome = outcome;
  }

  get result(): Uint8Array | null {
    return this.#run.result;
  }

  set result(result: Uint8Array | null) {
    this.#running().result = result;
  }

  get error(): string | null {
    return this.#run.error;
  }

  set error(error: string | null) {
    this.#running().error = error;
  }

  get closedAt(): number | null {
    return this.#run.closedAt;
  }

  set closedAt(at: number | null) {
    this.#running().closedAt = at;
  }

  /**
   * The entry has closed and left the view: its ticket is in the ticket index, and whatever
   * answers for it holds a copy (closedEntryOf). Its run (lease, attempts, result, close time)
   * is dropped; it still reads as closed, for the structures that drop it lazily (the head
   * queues, the deadline heap, its thread's queue), which read nothing else of a closed entry.
   *
   * WHY. An entry is made at its submission and has mostly reached V8's old generation by the
   * time it runs; its run is made when it is leased and is young. Once the closed entry is
   * garbage, the scavenger still takes its pointer to the run as a root (old-to-young pointers
   * are roots whether their holder lives or not) until the next full collection, so every
   * run of every closed entry was copied and promoted: ~550 KB per scavenge while a Worker
   * drained a backlog (--trace-gc-nvp, 2026-12-07), with scavenges of 3.5-4 ms every ~20 ms.
   */
  retire(): void {
    this.#run = RETIRED[this.#run.outcome!];
  }

  /** The entry's own RunState, made at its first lease, attempt or close. */
  #running(): RunState {
    if (this.#run === WAITING) this.#run = new RunState();
    return this.#run;
  }

  /** The input's length in bytes (without making a view). */
  get inputLength(): number {
    return this.#inputLength;
  }

  get tenant(): string {
    return this.threadState.tenant;
  }

  get thread(): string {
    return this.threadState.thread;
  }

  get agent(): string {
    return this.heads.agent;
  }

  get closed(): boolean {
    return this.outcome !== null;
  }
}

function isEmpty(record: Record<string, string>): boolean {
  for (const _ in record) return false;
  return true;
}

/** Adds an attempt, and where its record lies (-1: not known yet). listOf, not a literal: src/plain-objects.ts. */
export function addAttempt(entry: EntryState, attempt: AttemptRecord, offset: number): void {
  if (entry.attempts === NO_ATTEMPTS) entry.attempts = listOf(attempt);
  else (entry.attempts as AttemptRecord[]).push(attempt);
  if (entry.attemptOffsets === NO_OFFSETS) entry.attemptOffsets = listOf(offset);
  else (entry.attemptOffsets as number[]).push(offset);
}
