/**
 * The store clock: the time the queue stamps on events and judges leases, retry backoff,
 * notBefore, deadlines and ticket lifetimes by. It reads two sources, a wall clock (epoch
 * ms, may be stepped by NTP or an operator) and a monotonic clock (ms from any origin,
 * never stepped), and follows these rules:
 *
 * 1. Never backwards. It never decreases, and each partition's time (store time plus the
 *    partition's lead, partition-lead.ts) starts at or after the partition's latest event, so
 *    events' `at` never decrease on a partition. Replay reads time only from events, never
 *    from a clock.
 * 2. Follows the wall while the wall keeps pace. The wall's offset against the monotonic
 *    clock (wall - monotonic) is judged cumulatively, from the anchor: the reading at which
 *    store time last began to agree with the wall (open, or the end of a step). Between any
 *    two readings since the anchor the offset may move by at most `stepToleranceMs` plus 500
 *    ppm of the monotonic time between them (500 ppm is the most NTP slews a clock). While it
 *    does, store time is the wall's reading; a wall slewed back holds store time (rule 1), by
 *    at most the tolerance. Comparing only neighbouring readings would let a stopped wall, or
 *    one at the wrong rate, creep by less than the tolerance per reading forever; judged
 *    cumulatively, it is a step once it has drifted beyond the tolerance (plus 500 ppm),
 *    however often the clock is read. Until then store time follows it, so durations that
 *    span the start of a stop or a wrong rate are off by at most that much.
 * 3. A step (a sudden one, or a drift beyond rule 2) is reported once (onWarning
 *    `RUNLOG_CLOCK_STEP`, counted in `metrics().warnings`), however many readings it lasts,
 *    and store time keeps flowing at the monotonic rate from where it was: a lease, a backoff,
 *    a delay or a ticket lifetime lasts its real length whatever the wall did, neither
 *    expiring early after a forward jump or a fast wall nor held for hours after a backward
 *    one or a stopped wall.
 * 4. While stepped, store time slews toward the wall at 500 ppm (0.5 s per 1,000 s), so
 *    durations stay within 0.05% of real. The step ends, and is reported as ended, when the
 *    wall agrees again: store time and wall within the tolerance, and the wall's offset back
 *    within rule 2's bounds from the previous anchor (so a wall that keeps running fast or
 *    slow is never followed again, however close store time is to it); the reading that ends
 *    it is the new anchor. A transient jump undone ends it at once; a small real step ends
 *    when the slew has closed it; a step of hours is in effect kept for the life of the
 *    process: a real correction is adopted at the next open (rule 6).
 * 5. Times a caller gives (a submission's notBefore and deadline) are by the caller's wall
 *    clock. While stepped they are moved by the gap between wall and store time, so
 *    "wall + 60 s" stays 60 s away in store time. This is right when the caller's clock
 *    agrees with this host's wall after the step (its own wall, or an NTP-synced one);
 *    a caller whose clock agreed with the wall before the step is off by the step.
 * 6. At open there is no monotonic continuity with the previous process: store time
 *    starts at max(wall, floor), the floor being the earliest of the partitions' latest
 *    event times (open-run-queue.ts); a partition whose latest event is later starts there,
 *    as a lead of its own (partition-lead.ts), so the leases granted in another partition's
 *    time (a log stamped by nodes whose clocks differ) are not cut short. A wall behind the
 *    floor by more than the tolerance (a backward step, across a restart) is reported as a
 *    step and rules 3-5 apply; a forward step made while no process ran is adopted, like
 *    any downtime.
 *
 * A lone fake wall clock (tests) serves as both sources: it never steps against itself, so
 * store time is its reading; moved backwards, store time holds there and flows again with
 * it (rule 3). A monotonic clock moved backwards counts as not moving.
 */
import { catchRejection } from '../call-listener.ts';
import { RunlogError } from '../errors.ts';
import type { RunlogWarning } from '../warnings.ts';
import type { Clock } from './types.ts';
import { describe } from '../validation/index.ts';

/** The most a clock is slewed (NTP's bound), and the rate store time slews toward a stepped wall. */
const SLEW_RATE = 500e-6;

/** The range of a Date, in epoch ms. */
const MAX_EPOCH_MS = 8.64e15;

export interface StoreClockSources {
  wall: Clock;
  monotonic: Clock;
  stepToleranceMs: number;
}

export class StoreClock {
  /** Store time, unrounded (the monotonic clock may answer fractions). */
  private time: number;
  /** The monotonic clock's last reading. */
  private monotonicAt: number;
  /** Monotonic time run since open: the sum of the clock's forward moves (a clock moved back runs 0). */
  private run = 0;
  /** wall - run at the last reading: how the wall stands against the monotonic clock. */
  private offset: number;
  /** wall - time at the last reading. */
  private gap: number;
  /** Where the wall must stand while it keeps pace (rule 2); see `Agreement`. */
  private agreement: Agreement;
  /** `run` when the current step began (rule 3), or null while store time follows the wall. */
  private steppedSince: number | null = null;

  /** Starts at max(wall, floorAt): floorAt is the earliest of the partitions' latest event times (rule 6). */
  constructor(
    private readonly sources: StoreClockSources,
    floorAt: number,
    private readonly onWarning: (warning: RunlogWarning) => void,
  ) {
    const wall = this.readWall();
    this.monotonicAt = this.readMonotonic();
    this.offset = wall;
    this.agreement = new Agreement(this.offset, 0, sources.stepToleranceMs);
    this.time = Math.max(wall, floorAt);
    this.gap = wall - this.time;
    if (Math.abs(this.gap) > sources.stepToleranceMs) {
      this.steppedSince = 0;
      this.report(
        `the wall clock reads ${span(-this.gap)} before the latest event time; store time continues from that event at the monotonic clock's rate`,
      );
    }
  }

  /** Store time now, whole epoch ms. */
  now(): number {
    const wall = this.readWall();
    const monotonic = this.readMonotonic();
    const elapsed = Math.max(0, monotonic - this.monotonicAt);
    this.monotonicAt = monotonic;
    this.run += elapsed;
    const offset = wall - this.run;
    const jump = offset - this.offset;
    this.offset = offset;
    const flowed = this.time + elapsed;
    const gap = wall - flowed;
    const keepsPace = this.agreement.holds(offset, this.run);
    const agrees =
      this.steppedSince === null ? keepsPace : keepsPace && Math.abs(gap) <= this.sources.stepToleranceMs + SLEW_RATE * elapsed;
    if (agrees) {
      this.time = Math.max(wall, this.time);
      this.agreement.add(offset, this.run);
    } else {
      this.time = flowed + Math.sign(gap) * Math.min(Math.abs(gap), SLEW_RATE * elapsed);
    }
    this.gap = wall - this.time;
    const sudden = Math.abs(jump) > this.sources.stepToleranceMs + SLEW_RATE * elapsed;
    if (agrees && this.steppedSince !== null) this.rejoin(offset, sudden ? jump : null);
    else if (!agrees && this.steppedSince === null) this.beginStep(offset, sudden ? jump : null);
    return Math.floor(this.time);
  }

  /** A lead of a partition's time over store time beyond this is reported as a step (partition-lead.ts). */
  get stepToleranceMs(): number {
    return this.sources.stepToleranceMs;
  }

  /** A caller's wall-clock time in store time (rule 5): unchanged unless stepped. */
  fromWall(at: number | null): number | null {
    if (at === null || this.steppedSince === null) return at;
    return Math.max(0, Math.round(at - this.gap));
  }

  /** Rule 3: one report for the whole step, however many readings it lasts. */
  private beginStep(offset: number, jump: number | null): void {
    this.steppedSince = this.run;
    const state = `store time keeps flowing at the monotonic clock's rate, ${span(Math.abs(this.gap))} ${this.gap > 0 ? 'behind' : 'ahead of'} the wall, and slews toward it`;
    if (jump !== null) return this.report(`the wall clock stepped ${direction(jump)} by ${span(Math.abs(jump))}; ${state}`);
    const drift = offset - this.agreement.anchorOffset;
    this.report(
      `the wall clock drifted ${drift > 0 ? 'ahead of' : 'behind'} the monotonic clock by ${span(Math.abs(drift))} since store time last agreed with it, ` +
        `more than the tolerance and 500 ppm allow (it stopped, or runs at the wrong rate); ${state}`,
    );
  }

  /** Rule 4: the step is over; store time agrees with the wall again, and the wall is judged from here. */
  private rejoin(offset: number, jump: number | null): void {
    const lasted = this.run - (this.steppedSince ?? this.run);
    this.steppedSince = null;
    this.agreement = new Agreement(offset, this.run, this.sources.stepToleranceMs);
    const what =
      jump !== null
        ? `the wall clock stepped ${direction(jump)} by ${span(Math.abs(jump))}`
        : `the wall clock agrees with store time again after ${span(lasted)} apart`;
    this.report(`${what}; store time follows the wall again`);
  }

  private report(message: string): void {
    this.onWarning({ code: 'RUNLOG_CLOCK_STEP', message: `runlog store clock: ${message}` });
  }

  private readWall(): number {
    const at = read('clock', this.sources.wall);
    if (at < 0 || at > MAX_EPOCH_MS) throw clockError('clock', `returned ${describe(at)}, outside epoch ms 0 to ${MAX_EPOCH_MS}`);
    return at;
  }

  private readMonotonic(): number {
    return read('monotonicClock', this.sources.monotonic);
  }
}

/**
 * Rule 2, judged cumulatively. Since the anchor (the reading at which store time last began to
 * agree with the wall), the wall's offset against the monotonic clock may differ between any two
 * readings by at most the tolerance plus 500 ppm of the monotonic time between them. Comparing a
 * reading only with the previous one would let a stopped wall, or one at 10x, creep by less
 * than the tolerance per reading and never count as a step; comparing only with the anchor would
 * let it go unnoticed for 500 ppm of the whole time since the anchor (43 s after a day). Against
 * every reading since the anchor at once, it costs two numbers: the bound from reading i at run r
 * is offset_i ± (tolerance + 500 ppm * (r - run_i)), so only the largest offset_i + 500 ppm * run_i
 * and the smallest offset_i - 500 ppm * run_i matter.
 */
class Agreement {
  /** max over readings of offset + SLEW_RATE * (run - anchorRun). */
  private upper: number;
  /** min over readings of offset - SLEW_RATE * (run - anchorRun). */
  private lower: number;

  constructor(
    readonly anchorOffset: number,
    private readonly anchorRun: number,
    private readonly toleranceMs: number,
  ) {
    this.upper = anchorOffset;
    this.lower = anchorOffset;
  }

  /** Whether a wall at `offset` after `run` keeps pace with every reading since the anchor. */
  holds(offset: number, run: number): boolean {
    const slewed = SLEW_RATE * (run - this.anchorRun);
    return offset >= this.upper - slewed - this.toleranceMs && offset <= this.lower + slewed + this.toleranceMs;
  }

  add(offset: number, run: number): void {
    const slewed = SLEW_RATE * (run - this.anchorRun);
    this.upper = Math.max(this.upper, offset + slewed);
    this.lower = Math.min(this.lower, offset - slewed);
  }
}

function direction(jump: number): string {
  return jump > 0 ? 'forward' : 'back';
}

/** One reading, which must be a finite number; anything else is InvalidArgument naming the clock. */
function read(name: string, clock: Clock): number {
  let value: unknown;
  try {
    value = clock();
  } catch (error) {
    throw new RunlogError('InvalidArgument', `the ${name} option threw: ${describe(error)}`, { cause: error });
  }
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    catchRejection(value, () => {}); // an async clock: refused below; its rejection must not end the process
    throw clockError(name, `returned ${describe(value)}, not a finite number of ms`);
  }
  return value;
}

function clockError(name: string, problem: string): RunlogError {
  return new RunlogError('InvalidArgument', `the ${name} option ${problem}`);
}

/** A duration for messages: "3 h 0 min 0.000 s" reads badly, so the largest unit with a decimal. */
function span(ms: number): string {
  if (ms >= 3_600_000) return `${(ms / 3_600_000).toFixed(2)} h`;
  if (ms >= 60_000) return `${(ms / 60_000).toFixed(1)} min`;
  return `${(ms / 1000).toFixed(3)} s`;
}
