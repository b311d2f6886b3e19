/**
 * A distribution of durations (wait and run times): count, sum, min, max, and counts in fixed
 * buckets (`DURATION_BUCKETS_MS`: 1 ms to 1 day, about three a decade), enough for a
 * percentile within a bucket's width and cheap to keep per agent. Plain data: it checkpoints
 * as it is.
 */

/** Upper bounds (inclusive) of the buckets; a last bucket holds everything longer. */
export const DURATION_BUCKETS_MS: readonly number[] = [
  1, 2, 5, 10, 20, 50, 100, 200, 500, 1_000, 2_000, 5_000, 10_000, 20_000, 60_000, 120_000, 300_000, 600_000, 1_800_000, 3_600_000,
  21_600_000, 86_400_000,
];

export interface Distribution {
  count: number;
  sumMs: number;
  minMs: number | null;
  maxMs: number | null;
  /** Counts per bucket: `buckets[i]` of durations up to DURATION_BUCKETS_MS[i] (above the one before); the last, longer ones. */
  buckets: number[];
}

export function emptyDistribution(): Distribution {
  return { count: 0, sumMs: 0, minMs: null, maxMs: null, buckets: new Array<number>(DURATION_BUCKETS_MS.length + 1).fill(0) };
}

/** Adds a duration (a negative one, from a clock stepped back, counts as 0). */
export function addDuration(distribution: Distribution, durationMs: number): void {
  const ms = Math.max(0, durationMs);
  distribution.count++;
  distribution.sumMs += ms;
  distribution.minMs = distribution.minMs === null ? ms : Math.min(distribution.minMs, ms);
  distribution.maxMs = distribution.maxMs === null ? ms : Math.max(distribution.maxMs, ms);
  let i = 0;
  while (i < DURATION_BUCKETS_MS.length && ms > DURATION_BUCKETS_MS[i]!) i++;
  distribution.buckets[i]!++;
}

/**
 * The duration below which a share `q` (0 to 1) of them fall, as the upper bound of the
 * bucket it lands in (capped by the largest seen); null when there are none.
 */
export function quantileMs(distribution: Distribution, q: number): number | null {
  if (distribution.count === 0) return null;
  const rank = Math.max(1, Math.ceil(q * distribution.count));
  let seen = 0;
  for (let i = 0; i < distribution.buckets.length; i++) {
    seen += distribution.buckets[i]!;
    if (seen >= rank) return Math.min(DURATION_BUCKETS_MS[i] ?? distribution.maxMs!, distribution.maxMs!);
  }
  return distribution.maxMs;
}
