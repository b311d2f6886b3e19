/**
 * The store clock: the time the queue stamps on events and judges leases, retry backoff,
 * notBefore, deadlines and ticket lifetimes by. It reads two sources, a wall clock (epoch
 * ms, may be stepped by NTP or an operator) and a monotonic clock (ms from any origin,
 * never stepped), and follows these rules:
 *
 * 1. Never backwards. It starts at or after the latest event time of every partition and
 *    never decreases, so events' `at` never decrease on a partition. Replay reads time
 *    only from events, never from a clock.
 * 2. Follows the wall while the wall keeps pace. Each reading compares how far the wall
 *    moved with how far the monotonic clock moved since the previous reading. Within
 *    `stepToleranceMs` (plus 500 ppm of the interval, the most NTP slews a clock) store
 *    time is the wall's reading; a wall slewed back holds store time (rule 1), by at most
 *    the tolerance.
 * 3. A step beyond the tolerance is reported (onWarning `RUNLOG_CLOCK_STEP`, counted in
 *    `metrics().warnings`), and store time keeps flowing at the monotonic rate from where it was: a
 *    lease, a backoff, a delay or a ticket lifetime lasts its real length whatever the
 *    wall did, neither expiring early after a forward jump nor held for hours after a
 *    backward one.
 * 4. While stepped (store time and wall apart by more than the tolerance), store time
 *    slews toward the wall at 500 ppm (0.5 s per 1,000 s), so durations stay within 0.05%
 *    of real. Once the wall is back within the tolerance (a transient jump undone, or the
 *    slew closed a small gap) rule 2 applies again. A step of hours is in effect kept for
 *    the life of the process: a real correction is adopted at the next open (rule 6).
 * 5. Times a caller gives (a submission's notBefore and deadline) are by the caller's wall
 *    clock. While stepped they are moved by the gap between wall and store time, so
 *    "wall + 60 s" stays 60 s away in store time. This is right when the caller's clock
 *    agrees with this host's wall after the step (its own wall, or an NTP-synced one);
 *    a caller whose clock agreed with the wall before the step is off by the step.
 * 6. At open there is no monotonic continuity with the previous process: store time
 *    starts at max(wall, latest event time). A wall behind the latest event time by more
 *    than the tolerance (a backward step, across a restart) is reported as a step and
 *    rules 3-5 apply; a forward step made while no process ran is adopted, like any
 *    downtime.
 *
 * A lone fake wall clock (tests) serves as both sources: it never steps against itself, so
 * store time is its reading; moved backwards, store time holds there and flows again with
 * it (rule 3).
 */
import { catchRejection } from '../call-listener.ts';
import { RunlogError } from '../errors.ts';
import type { RunlogWarning } from '../warnings.ts';
import type { Clock } from './types.ts';
import { describe } from './validate.ts';

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
  private monotonicAt: number;
  /** wall - time at the last reading. */
  private gap: number;

  /** Starts at max(wall, floorAt): floorAt is the latest event time of every partition (rule 6). */
  constructor(
    private readonly sources: StoreClockSources,
    floorAt: number,
    private readonly onWarning: (warning: RunlogWarning) => void,
  ) {
    const wall = this.readWall();
    this.monotonicAt = this.readMonotonic();
    this.time = Math.max(wall, floorAt);
    this.gap = wall - this.time;
    if (this.stepped()) {
      this.report(`the wall clock reads ${span(-this.gap)} before the latest event time; store time continues from that event at the monotonic clock's rate`);
    }
  }

  /** Store time now, whole epoch ms. */
  now(): number {
    const wall = this.readWall();
    const monotonic = this.readMonotonic();
    const elapsed = Math.max(0, monotonic - this.monotonicAt);
    const flowed = this.time + elapsed;
    const allowance = this.sources.stepToleranceMs + SLEW_RATE * elapsed;
    const jump = wall - flowed - this.gap;
    const gap = wall - flowed;
    if (Math.abs(gap) <= allowance) this.time = Math.max(wall, this.time);
    else this.time = flowed + Math.sign(gap) * Math.min(Math.abs(gap), SLEW_RATE * elapsed);
    this.monotonicAt = monotonic;
    this.gap = wall - this.time;
    if (Math.abs(jump) > allowance) this.reportStep(jump);
    return Math.floor(this.time);
  }

  /** A caller's wall-clock time in store time (rule 5): unchanged unless stepped. */
  fromWall(at: number | null): number | null {
    if (at === null || !this.stepped()) return at;
    return Math.max(0, Math.round(at - this.gap));
  }

  private stepped(): boolean {
    return Math.abs(this.gap) > this.sources.stepToleranceMs;
  }

  private reportStep(jump: number): void {
    const direction = jump > 0 ? 'forward' : 'back';
    const state = this.stepped()
      ? `store time keeps flowing at the monotonic clock's rate, ${span(Math.abs(this.gap))} ${this.gap > 0 ? 'behind' : 'ahead of'} the wall, and slews toward it`
      : 'store time follows the wall again';
    this.report(`the wall clock stepped ${direction} by ${span(Math.abs(jump))}; ${state}`);
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
