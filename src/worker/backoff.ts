/** Retry delays. */
export const BACKOFF_BASE_MS = 1000;
export const BACKOFF_MAX_MS = 10 * 60 * 1000;

/** The delay after the attempt'th failure: 1 s, doubling, at most 10 min. */
export function defaultBackoff(attempt: number): number {
  const exponent = Math.min(Math.max(attempt, 1) - 1, 30);
  return Math.min(BACKOFF_BASE_MS * 2 ** exponent, BACKOFF_MAX_MS);
}
