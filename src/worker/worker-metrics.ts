/**
 * The worker's metrics: OpenTelemetry instruments on the 'runlog' meter (a no-op unless
 * the application installs an SDK) and the same counts kept as plain numbers for
 * `metrics()`. A counter `leasesLost` is the instrument `runlog.worker.leases_lost`.
 */
import { metrics, type Attributes, type Counter, type Histogram, type UpDownCounter } from '@opentelemetry/api';
import type { WorkerMetricsSnapshot } from './types.ts';

export type CounterName =
  'enqueued' | 'processed' | 'succeeded' | 'failed' | 'retried' | 'leasesLost' | 'parked' | 'deferred' | 'abandoned';

const COUNTERS: readonly CounterName[] = [
  'enqueued',
  'processed',
  'succeeded',
  'failed',
  'retried',
  'leasesLost',
  'parked',
  'deferred',
  'abandoned',
];

export class WorkerMetrics {
  private readonly counts: WorkerMetricsSnapshot = {
    enqueued: 0,
    processed: 0,
    succeeded: 0,
    failed: 0,
    retried: 0,
    leasesLost: 0,
    parked: 0,
    deferred: 0,
    abandoned: 0,
    inFlight: 0,
    totalWaitMs: 0,
    totalExecMs: 0,
  };
  private readonly counters = new Map<CounterName, Counter>();
  private readonly waitMs: Histogram;
  private readonly execMs: Histogram;
  private readonly inFlight: UpDownCounter;
  /** Each agent's attributes, made once: every run records several measurements under them. */
  private readonly attributes = new Map<string, Attributes>();

  constructor() {
    const meter = metrics.getMeter('runlog');
    for (const name of COUNTERS) this.counters.set(name, meter.createCounter(`runlog.worker.${snakeCase(name)}`));
    this.waitMs = meter.createHistogram('runlog.worker.wait', { unit: 'ms', description: 'submission to attempt start, store clock' });
    this.execMs = meter.createHistogram('runlog.worker.exec', { unit: 'ms', description: 'attempt start to outcome, store clock' });
    this.inFlight = meter.createUpDownCounter('runlog.worker.in_flight', { description: 'runs in progress' });
  }

  add(name: CounterName, agent: string, n = 1): void {
    this.counts[name] += n;
    this.counters.get(name)!.add(n, this.of(agent));
  }

  wait(agent: string, ms: number): void {
    this.counts.totalWaitMs += ms;
    this.waitMs.record(ms, this.of(agent));
  }

  exec(agent: string, ms: number): void {
    this.counts.totalExecMs += ms;
    this.execMs.record(ms, this.of(agent));
  }

  runStarted(agent: string): void {
    this.counts.inFlight++;
    this.inFlight.add(1, this.of(agent));
  }

  runEnded(agent: string): void {
    this.counts.inFlight--;
    this.inFlight.add(-1, this.of(agent));
  }

  private of(agent: string): Attributes {
    let attributes = this.attributes.get(agent);
    if (attributes === undefined) this.attributes.set(agent, (attributes = Object.freeze({ agent })));
    return attributes;
  }

  snapshot(): WorkerMetricsSnapshot {
    return { ...this.counts };
  }
}

/** OpenTelemetry's naming: `leasesLost` is `leases_lost`. */
function snakeCase(name: string): string {
  return name.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);
}
