/** Counters folded from events: the Dispatcher seed's metrics, per partition. */

/** What the fold counts; the queue's QueueMetrics adds what it knows now (open entries, warnings). */
export interface MetricCounters {
  enqueued: number;
  processed: number;
  succeeded: number;
  failed: number;
  retried: number;
  expired: number;
  cancelled: number;
  /** Entries pruned by retention. */
  dropped: number;
  totalWaitMs: number;
  maxWaitMs: number;
  totalExecMs: number;
  maxExecMs: number;
}

export function emptyMetrics(): MetricCounters {
  return {
    enqueued: 0,
    processed: 0,
    succeeded: 0,
    failed: 0,
    retried: 0,
    expired: 0,
    cancelled: 0,
    dropped: 0,
    totalWaitMs: 0,
    maxWaitMs: 0,
    totalExecMs: 0,
    maxExecMs: 0,
  };
}

export function recordWait(metrics: MetricCounters, waitMs: number): void {
  metrics.totalWaitMs += waitMs;
  if (waitMs > metrics.maxWaitMs) metrics.maxWaitMs = waitMs;
}

/** An attempt ended (closed or retried): it was processed and ran for execMs. */
export function recordExec(metrics: MetricCounters, execMs: number): void {
  metrics.processed++;
  metrics.totalExecMs += execMs;
  if (execMs > metrics.maxExecMs) metrics.maxExecMs = execMs;
}

export function addMetrics(into: MetricCounters, from: MetricCounters): void {
  for (const name of Object.keys(into) as (keyof MetricCounters)[]) {
    into[name] = name.startsWith('max') ? Math.max(into[name], from[name]) : into[name] + from[name];
  }
}
