/**
 * Prometheus metrics of the service (GET /metrics, text format 0.0.4), on prom-client.
 *
 * The queue's metrics are not kept twice: each scrape asks the queue (`metrics()`, `health()`)
 * and sets the registry's values from that one answer, so what /metrics says is what
 * `queue.metrics()` said at that moment (counters since the queue opened: a restart is a
 * counter reset, which Prometheus expects). Scrapes run one after another, so two at once
 * never mix their answers. HTTP requests are counted as they are answered: the server calls
 * `recordRequest` once per request, with its route's pattern (never the path itself, which
 * names tenants and entries: one series per route, not per entry).
 *
 * Every name starts with `runlog_`; durations are in seconds, as Prometheus does.
 */
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { PartitionMode, RunQueueApi } from '../queue/types.ts';

/** The content type of a scrape: Prometheus text format 0.0.4. */
export const PROMETHEUS_CONTENT_TYPE = Registry.PROMETHEUS_CONTENT_TYPE;

/** One answered HTTP request, as the server tells it. */
export interface AnsweredRequest {
  /** The route's path pattern, e.g. `/v1/tenants/{tenant}/entries/{entryId}`; `unmatched` when no route matched. */
  route: string;
  method: string;
  status: number;
  /** From the request's arrival to its answer (a long-poll's wait included). */
  seconds: number;
}

/** What the server calls once per answered request. */
export interface HttpRequestRecorder {
  recordRequest(request: AnsweredRequest): void;
}

const MODES = [
  'serving',
  'draining',
  'rebuilding',
  'down',
  'stopped',
  'unowned',
  'acquiring',
  'releasing',
] as const satisfies readonly PartitionMode[];
/** Fails to compile if PartitionMode gains a mode this list lacks. */
const EVERY_MODE: Record<Exclude<PartitionMode, (typeof MODES)[number]>, never> = {};
void EVERY_MODE;

const METHODS = new Set(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS']);

/** Long-polls wait up to a minute: the buckets reach that far. */
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

type CountField = 'enqueued' | 'processed' | 'succeeded' | 'failed' | 'retried' | 'expired' | 'cancelled' | 'dropped';

/** Queue counters: the QueueMetrics field each one reports, its name and help. */
const COUNTERS: [field: CountField, name: string, help: string][] = [
  ['enqueued', 'runlog_entries_enqueued_total', 'Entries submitted (new entries only; an idempotent resubmission is not counted).'],
  ['processed', 'runlog_attempts_processed_total', 'Attempts that ended: closed succeeded or failed, or given back to retry.'],
  ['succeeded', 'runlog_entries_succeeded_total', 'Entries closed succeeded.'],
  ['failed', 'runlog_entries_failed_total', 'Entries closed failed (parked after their last attempt, or closed failed by a worker).'],
  ['retried', 'runlog_attempts_retried_total', 'Failed attempts given back to run again after a backoff.'],
  ['expired', 'runlog_entries_expired_total', 'Entries closed expired: their start deadline passed before they started.'],
  ['cancelled', 'runlog_entries_cancelled_total', 'Entries cancelled.'],
  ['dropped', 'runlog_entries_dropped_total', 'Closed entries pruned by retention.'],
];

export class PrometheusMetrics implements HttpRequestRecorder {
  readonly registry = new Registry();
  readonly contentType = PROMETHEUS_CONTENT_TYPE;
  private readonly counters: [CountField, Counter][];
  private readonly open: Gauge;
  private readonly warnings: Counter;
  private readonly partitionMode: Gauge;
  private readonly waitTotal: Counter;
  private readonly waitMax: Gauge;
  private readonly execTotal: Counter;
  private readonly execMax: Gauge;
  private readonly requests: Counter;
  private readonly latency: Histogram;
  /** The scrape in progress (scrapes run one after another). */
  private scraping: Promise<unknown> = Promise.resolve();

  constructor(private readonly queue: Pick<RunQueueApi, 'metrics' | 'health'>) {
    const registers = [this.registry];
    this.counters = COUNTERS.map(([field, name, help]) => [field, new Counter({ name, help, registers })]);
    this.open = new Gauge({ name: 'runlog_entries_open', help: 'Open entries now (pending, leased or running).', registers });
    this.warnings = new Counter({
      name: 'runlog_warnings_total',
      help: 'Warnings reported since the queue opened, by code (RUNLOG_TORN_TAIL, RUNLOG_PARTITION_DOWN, ...).',
      labelNames: ['code'],
      registers,
    });
    this.partitionMode = new Gauge({
      name: 'runlog_partition_mode',
      help: "Each partition's mode: 1 for the mode it is in, 0 for the others (serving, draining, rebuilding, down, stopped).",
      labelNames: ['partition', 'mode'],
      registers,
    });
    this.waitTotal = new Counter({
      name: 'runlog_wait_seconds_total',
      help: 'Time from submission to first attempt, summed over entries that started (store clock).',
      registers,
    });
    this.waitMax = new Gauge({ name: 'runlog_wait_max_seconds', help: 'The longest time from submission to first attempt.', registers });
    this.execTotal = new Counter({
      name: 'runlog_exec_seconds_total',
      help: 'Time from the start of an attempt to its end (close or retry), summed over processed attempts (store clock).',
      registers,
    });
    this.execMax = new Gauge({ name: 'runlog_exec_max_seconds', help: 'The longest attempt, start to end.', registers });
    this.requests = new Counter({
      name: 'runlog_http_requests_total',
      help: 'HTTP requests answered, by route pattern, method and status.',
      labelNames: ['route', 'method', 'status'],
      registers,
    });
    this.latency = new Histogram({
      name: 'runlog_http_request_duration_seconds',
      help: 'HTTP request duration, arrival to answer (long-polls included), by route pattern, method and status.',
      labelNames: ['route', 'method', 'status'],
      buckets: LATENCY_BUCKETS,
      registers,
    });
  }

  recordRequest({ route, method, status, seconds }: AnsweredRequest): void {
    // A made-up method would be a series of its own: it is counted as OTHER.
    const labels = { route, method: METHODS.has(method) ? method : 'OTHER', status: String(status) };
    this.requests.inc(labels);
    this.latency.observe(labels, Math.max(0, seconds));
  }

  /** The text of one scrape, from the queue's metrics and health now. */
  scrape(): Promise<string> {
    const next = this.scraping.then(
      () => this.render(),
      () => this.render(),
    );
    this.scraping = next;
    return next;
  }

  private async render(): Promise<string> {
    const [metrics, health] = await Promise.all([this.queue.metrics(), this.queue.health()]);
    for (const [field, counter] of this.counters) setCounter(counter, metrics[field]);
    this.open.set(metrics.open);
    this.warnings.reset();
    for (const [code, count] of Object.entries(metrics.warnings)) this.warnings.inc({ code }, count);
    this.partitionMode.reset();
    for (const { partition, mode } of health) {
      for (const each of MODES) this.partitionMode.set({ partition: String(partition), mode: each }, each === mode ? 1 : 0);
    }
    setCounter(this.waitTotal, metrics.totalWaitMs / 1000);
    this.waitMax.set(metrics.maxWaitMs / 1000);
    setCounter(this.execTotal, metrics.totalExecMs / 1000);
    this.execMax.set(metrics.maxExecMs / 1000);
    return this.registry.metrics();
  }
}

/** A counter set to what the queue counted (prom-client counters only go up: reset, then add). */
function setCounter(counter: Counter, value: number): void {
  counter.reset();
  counter.inc(value);
}
