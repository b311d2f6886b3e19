/**
 * The pool: up to `concurrency` handlers at once, fed by one taking loop. A run holds its slot
 * while its handler runs; once the handler has settled, the slot is free for the next entry
 * while the run's outcome (its close, a retry) is still being made durable: a slot waiting on
 * a datasync would cap the pool at concurrency ÷ the append latency, whatever the handlers
 * cost. At most `concurrency` more runs may be recording their outcome at once (runs held in
 * all: at most twice the concurrency; twice `concurrency` + the entries taken ahead, below).
 *
 * Taking: while slots are free, the loop asks the queue for entries in one takeStarted (each
 * leased and its attempt started, durable together) and starts a run of each as the answer
 * comes. A take reserves the slots it asks for until answered. Up to TAKES_IN_FLIGHT takes
 * may be in flight at once, each for at most half the slots (at least one), the next sent a
 * turn after the previous: so one take's append is made durable while the runs of the one
 * before it execute and the next take and their closes are decided, which go to the log in
 * the following append. With one take at a time for every slot, the pool would alternate
 * between waiting for the log and working, and each take would wait for the closes' append
 * ahead of it too.
 *
 * A take that finds fewer than it asked for means nothing more is takeable now (in process,
 * takes are decided in the order sent): the loop then waits idle without polling the queue hot,
 * once its other takes are answered, and wakes on the first of: the queue's onWork (a
 * submission, yield or close on this process), the end of a run (it may have made work: the
 * loop takes once more, as a slot that ran took again), `wake()`, the store-clock time the next
 * entry becomes due (converted to a delay from queue.now()), or pollMs.
 *
 * Stopping: once `signal` aborts, the loop takes no more; runs in progress see the same
 * signal (supervise.ts aborts their handlers and hands their entries back; the runs of a take
 * answered after the abort hand their entries back at once, and so do the entries waiting
 * for a slot), and `run` resolves when every take is answered and every run has settled.
 */
import { ChurnSet } from '../churn-map.ts';
import { MAX_ANSWER_BYTES } from '../queue/requests.ts';
import type { Started } from '../queue/types.ts';
import { runEntry, type RunContext } from './run-entry.ts';
import type { Pace } from './supervise.ts';
import type { Waker } from './waker.ts';

/** How many takes may be in flight at once. */
const TAKES_IN_FLIGHT = 2;

/** An entry taken ahead of a free slot, waiting for one: its take's askedAt. */
/** A class, not a literal, as are slots: both are held as long as an entry waits or runs (src/plain-objects.ts). */
class Waiting {
  constructor(
    readonly started: Started,
    readonly askedAt: number,
  ) {}
}

/** Whether a run still holds its slot in the pool (freed once, by freeSlot). */
class Slot {
  held = true;
}

/**
 * Whether a take answered fewer than it asked for because its answer reached the queue's
 * bound on bytes (MAX_ANSWER_BYTES: it stops before the entry that would pass it), not because
 * nothing more was takeable: more may be. Half the bound: the entry it stopped before is at
 * most the queue's largest input, rarely more than that. A take cut with less (an entry of
 * over 8 MiB after small ones) reads as empty, and the idle wait then asks nextDueAt, which
 * answers a time passed already for the entry still takeable: the next take goes a
 * millisecond later, not at the next signal or pollMs.
 */
function boundByBytes(started: readonly Started[]): boolean {
  let bytes = 0;
  for (const { entry } of started) bytes += entry.input.length;
  return bytes >= MAX_ANSWER_BYTES / 2;
}

/** What the latest answered take said: more may be takeable, nothing more is (since the generation noted before it), or it failed. */
type Found = { kind: 'more' } | { kind: 'empty'; seen: number } | { kind: 'failed'; seen: number };

export class Pool {
  /** Handlers running: the slots taken. */
  private running = 0;
  /** Slots asked for by the takes in flight. */
  private reserved = 0;
  /** The takes in flight. */
  private readonly takes = new ChurnSet<Promise<void>>();
  /** Takes sent, and the number of the latest one answered: only the latest answer says whether more is takeable. */
  private takesSent = 0;
  private latestAnswered = 0;
  private found: Found = { kind: 'more' };
  /** The waker generation at which a take last found nothing more. */
  private emptyAt = -1;
  /** Wakes the loop waiting for a free slot or a take's answer. */
  private changed: (() => void) | null = null;
  /** Runs in progress: a handler running, or its outcome being recorded. */
  private readonly runs = new ChurnSet<Promise<void>>();
  /** Entries taken ahead of a free slot, oldest first (see Taking ahead). */
  private readonly waiting: Waiting[] = [];
  /** Handlers that settled in the turn they were called, since the last one that did not. */
  private quickRuns = 0;
  /** Handlers in a row that answered in their turn but held the thread (see counted). */
  private heldRuns = 0;
  /** The run signal (set by run). */
  private signal: AbortSignal = new AbortController().signal;

  constructor(
    private readonly ctx: RunContext,
    private readonly agents: readonly string[],
    private readonly holder: string,
    private readonly waker: Waker,
    private readonly onIdle: () => void,
  ) {}

  async run(signal: AbortSignal): Promise<void> {
    if (this.agents.length === 0) return;
    const concurrency = this.ctx.options.concurrency;
    this.signal = signal;
    const wakeLoop = (): void => this.changed?.();
    signal.addEventListener('abort', wakeLoop, { once: true });
    try {
      while (!signal.aborted) {
        const ahead = this.quickRuns >= concurrency ? concurrency : 0;
        const perTake = ahead > 0 ? concurrency : Math.max(1, Math.ceil(concurrency / TAKES_IN_FLIGHT));
        const held = this.reserved + this.waiting.length;
        const free = Math.min(concurrency + ahead - this.running, 2 * (concurrency + ahead) - this.runs.size) - held;
        const found = this.found;
        if (found.kind === 'more' && free > 0 && this.takes.size < TAKES_IN_FLIGHT) {
          this.take(Math.min(free, perTake));
          // The next take a turn later: this one's append is then on its way, and the next goes in the one after.
          await new Promise((resolve) => setImmediate(resolve));
          continue;
        }
        if (found.kind !== 'more' && this.takes.size === 0) {
          this.onIdle();
          const ms = found.kind === 'failed' ? this.ctx.options.pollMs : await this.idleDelay();
          await this.waker.wait(found.seen, ms, signal);
          if (this.found === found) this.found = { kind: 'more' };
          continue;
        }
        await new Promise<void>((resolve) => (this.changed = resolve));
        this.changed = null;
        // Once the microtasks queued now have run: quick handlers settle within them and free their slots, so
        // the next take asks for all of those, not the first one freed (and goes before their closes, sent a turn later).
        await new Promise((resolve) => process.nextTick(resolve));
      }
    } finally {
      signal.removeEventListener('abort', wakeLoop);
      await Promise.all(this.takes);
      this.startWaiting(); // stopping: each hands its entry back
      await Promise.all(this.runs);
    }
  }

  /** Nothing running or recording, and a take made since the last notification found nothing more. */
  quiet(): boolean {
    return this.runs.size === 0 && this.takes.size === 0 && this.waiting.length === 0 && this.emptyAt === this.waker.generation;
  }

  /** Takes up to `max` entries (reserving as many slots until answered) and starts their runs as the answer comes. */
  private take(max: number): void {
    const seen = this.waker.generation;
    const sent = ++this.takesSent;
    const askedAt = this.ctx.queue.now();
    const { leaseMs: ttlMs, tenants, maxAttempts } = this.ctx.options;
    const cap = maxAttempts === null ? {} : { maxAttempts };
    this.reserved += max;
    const answered = (found: Found): void => {
      this.reserved -= max;
      this.takes.delete(take);
      if (sent > this.latestAnswered) {
        this.latestAnswered = sent;
        this.found = found;
      }
      this.changed?.();
    };
    const take = this.ctx.queue.takeStarted({ agents: this.agents, tenants, holder: this.holder, ttlMs, max, ...cap }).then(
      (started) => {
        for (const entry of started) this.waiting.push(new Waiting(entry, askedAt));
        this.startWaiting();
        const empty = started.length < max && !boundByBytes(started);
        if (empty) this.emptyAt = Math.max(this.emptyAt, seen);
        answered(empty ? { kind: 'empty', seen } : { kind: 'more' });
      },
      (error: unknown) => {
        this.ctx.options.onEvent({ type: 'error', error, context: 'taking or running an entry' });
        answered({ kind: 'failed', seen });
      },
    );
    this.takes.add(take);
  }

  /**
   * Starts the waiting entries while slots are free (all of them once stopping: they hand
   * their entries back). One whose take was asked for a quarter of its lease ago or more (it
   * waited for a slot, or its answer came late) is handed back, not run (run-entry.ts tooLateToRun).
   */
  private startWaiting(): void {
    const { concurrency } = this.ctx.options;
    while (this.waiting.length > 0 && (this.running < concurrency || this.signal.aborted)) {
      const { started, askedAt } = this.waiting.shift()!;
      this.start(started, this.signal, askedAt);
    }
  }

  private start(started: Started, signal: AbortSignal, askedAt: number): void {
    this.running++;
    const slot = new Slot();
    const run: Promise<void> = runEntry(this.ctx, started, signal, askedAt, (pace) => this.freeSlot(slot, pace)).then(
      () => this.ended(run, slot),
      (error: unknown) => {
        this.ctx.options.onEvent({ type: 'error', error, context: 'taking or running an entry' });
        this.ended(run, slot);
      },
    );
    this.runs.add(run);
  }

  /** The run's handler has settled (how: `pace`), or the run ended without it (null): its slot is free, once. */
  private freeSlot(slot: Slot, pace: Pace | null): void {
    if (!slot.held) return;
    slot.held = false;
    this.running--;
    if (pace !== null) this.counted(pace);
    if (this.waiting.length > 0) this.startWaiting();
    this.changed?.();
  }

  /**
   * Counts a settled handler toward taking ahead (quickRuns): a quick one counts; one that
   * answered later ends it; one that held the thread is forgiven once (a collection or a
   * preemption can stretch a no-op handler past QUICK_HANDLER_MS), and two in a row end it.
   */
  private counted(pace: Pace): void {
    if (pace === 'async' || (pace === 'held' && ++this.heldRuns >= 2)) {
      this.quickRuns = 0;
      return;
    }
    if (pace === 'quick') this.heldRuns = 0;
    this.quickRuns++;
  }

  private ended(run: Promise<void>, slot: Slot): void {
    this.runs.delete(run);
    this.freeSlot(slot, null); // a run that ended without its handler (parked, handed back, lost)
    this.changed?.();
    // A run's end may have made work (the thread's next entry, a retry due at once) whose
    // signal a remote queue sends later: the loop takes again, and idleness waits for that take.
    this.waker.notifyOne();
    if (this.runs.size === 0) this.onIdle();
  }

  /**
   * Until the next entry of the pool's agents (and tenants) is due by the store clock, at most pollMs.
   * A queue that cannot answer (a remote one, unreachable) leaves it at pollMs: waiting is
   * never the place to fail, the next take reports the trouble.
   */
  private async idleDelay(): Promise<number> {
    const dueAt = await this.ctx.queue.nextDueAt(this.agents, this.ctx.options.tenants).catch(() => null);
    if (dueAt === null) return this.ctx.options.pollMs;
    return Math.min(this.ctx.options.pollMs, Math.max(1, dueAt - this.ctx.queue.now()));
  }
}
