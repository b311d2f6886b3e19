/**
 * The client's `now()`: the server's store clock, followed from afar. Every answer carries
 * `runlog-now` (the store clock when the answer was made); the server's time at receipt is
 * at least that, so each answer gives a lower bound `serverNow + (monotonic now - monotonic
 * at receipt)`. The clock keeps the greatest bound seen: it never runs backwards, and an
 * answer that overtook a later one (made earlier, received later) changes nothing.
 */
import type { Clock } from '../queue/types.ts';

export const NOW_HEADER = 'runlog-now';

export class ServerClock {
  /** serverNow - monotonic at receipt, the greatest seen; null before the first answer. */
  #offset: number | null = null;

  constructor(private readonly monotonic: Clock) {}

  /** Notes an answer's `runlog-now` header (a missing or malformed one is ignored). */
  observe(header: string | string[] | undefined): void {
    const serverNow = typeof header === 'string' ? Number(header) : NaN;
    if (!Number.isFinite(serverNow)) return;
    const offset = serverNow - this.monotonic();
    if (this.#offset === null || offset > this.#offset) this.#offset = offset;
  }

  /** The store clock now, as far as the answers tell (connect reads one first, so there always is one). */
  now(): number {
    if (this.#offset === null) throw new Error('the server clock has no reading yet');
    return Math.round(this.#offset + this.monotonic());
  }
}
