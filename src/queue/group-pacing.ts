/**
 * Whether lock-stepped callers should run as two cohorts (group-commit.ts: starting early),
 * judged from what one partition's group commit measures: how long an append takes to be
 * durable (A: the write and its fsync), how much of that the thread itself spends handing it
 * over (C: framing, the write call, handing the datasync to libuv's pool), and how long a turn
 * takes (T: from its first write to its end, the thread deciding and folding its commands).
 *
 * With one append in flight at a time, a round in which every caller makes one command costs
 *   - in lock step, one cohort:  T(all) + A           (the fsync waits for the turn, and then
 *                                                      the turn waits for the fsync)
 *   - in two cohorts:            max(2A, T(all) + C)  (each cohort's turn overlaps the other's
 *                                                      fsync, but the fsyncs go one by one,
 *                                                      and the thread hands one more over)
 * so two cohorts pay when C < A < T(all): when the thread, not the device, is the bound, and an
 * append is mostly waiting (the test VM's datasync of ~0.4 ms, of which C ~0.06 ms, beside
 * ~0.8 ms of deciding 64 commands). On a slow device (a datasync of several ms) lock step is
 * faster, by up to half, and the group commit gathers the cohorts again; without fsync (an
 * append is almost all C) splitting only adds appends. T(all) is one turn in lock step and two
 * (one per cohort) when split; C must be under half of A, for a margin.
 *
 * The times are moving averages (a weight of 1/8 for the newest), so one slow fsync or a
 * garbage collection in a turn does not flip the mode. Until they are measured, lock step.
 */
const WEIGHT = 1 / 8;

/**
 * The fewest records a group starts early with: enough that the fsync it costs (on the test VM
 * ~35-70 µs of this thread's CPU to hand a datasync over and hear back) carries many commands.
 * Otherwise it starts once it holds half the records of the previous turn, so that two cohorts
 * come out even (an uneven split leaves the smaller one's turn shorter than the fsync it overlaps).
 */
const MIN_EARLY_RECORDS = 16;

export class GroupPacing {
  /** `now`: a clock in ms (tests pass one they move). */
  constructor(readonly now: () => number = () => performance.now()) {}

  /** Moving averages, in ms; NaN until measured. */
  #appendMs = NaN;
  #handOverMs = NaN;
  #turnMs = NaN;
  /** When the current turn's first write was made (now()), or -1 between turns. */
  #turnStartedAt = -1;
  /** The records written in the current turn so far, and in the previous turn. */
  #turnRecords = 0;
  #previousTurnRecords = 0;
  /** Whether the callers run as two cohorts now. */
  #split = false;

  /** A write of `records` records to the group commit: the turn's first starts its clock, and its end is heard a microtask later. */
  wrote(records: number): void {
    this.#turnRecords += records;
    if (this.#turnStartedAt >= 0) return;
    this.#turnStartedAt = this.now();
    queueMicrotask(() => this.#turnEnded());
  }

  #turnEnded(): void {
    this.#turnMs = average(this.#turnMs, this.now() - this.#turnStartedAt);
    this.#turnStartedAt = -1;
    this.#previousTurnRecords = this.#turnRecords;
    this.#turnRecords = 0;
  }

  /** The append started at `startedAt` (now()) is handed over: the thread's part of it is done. */
  handedOver(startedAt: number): void {
    this.#handOverMs = average(this.#handOverMs, this.now() - startedAt);
  }

  /** The append started at `startedAt` (now()) is durable. */
  appended(startedAt: number): void {
    this.#appendMs = average(this.#appendMs, this.now() - startedAt);
  }

  /** Nothing is in flight and a group of `records` records could start in the middle of this turn: whether to split the callers (and so start it). */
  split(records: number): boolean {
    if (records < Math.max(MIN_EARLY_RECORDS, this.#previousTurnRecords / 2)) return false;
    this.#split = this.#pays(1);
    return this.#split;
  }

  /** A group completed: whether the two cohorts stay (else they are gathered into one), unless the owner awaits an idle moment. */
  staySplit(awaitingIdle: boolean): boolean {
    this.#split = this.#split && !awaitingIdle && this.#pays(2);
    return this.#split;
  }

  /** Whether two cohorts pay when a round of every caller's commands takes `turns` turns of the current length. */
  #pays(turns: number): boolean {
    return 2 * this.#handOverMs < this.#appendMs && this.#appendMs < this.#turnMs * turns; // false while any is NaN
  }
}

function average(current: number, sample: number): number {
  return Number.isNaN(current) ? sample : current + WEIGHT * (sample - current);
}
