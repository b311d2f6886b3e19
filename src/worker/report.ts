/**
 * What a person must see of a worker without setting `onEvent`: failed attempts, parked,
 * abandoned and lost runs, and the worker's own trouble (a queue that refuses takes, a
 * lease it cannot renew, periodic work it cannot submit). Each becomes a WorkerLogRecord
 * for the `logger` option (default: one line on stderr).
 *
 * Rate limit, per kind of record: at most LOG_LIMIT.records in a window of
 * LOG_LIMIT.windowMs by the store clock; the rest are counted, and the first record of the
 * kind after the window (or the worker's stop, whichever comes first) says how many were
 * suppressed. So a loop of failures costs a few lines a minute, and none is lost unsaid.
 */
import { callListener } from '../call-listener.ts';
import { describe } from '../validation/index.ts';
import type { WorkerEvent, WorkerLogKind, WorkerLogRecord } from './types.ts';

export const LOG_LIMIT = { records: 10, windowMs: 60_000 } as const;

interface Window {
  startedAt: number;
  reported: number;
  suppressed: number;
}

export class WorkerReporter {
  private readonly windows = new Map<WorkerLogKind, Window>();

  constructor(
    private readonly holder: string,
    private readonly logger: (record: WorkerLogRecord) => void,
    private readonly now: () => number,
  ) {}

  /** Reports `event` if a person should see it. */
  event(event: WorkerEvent): void {
    const record = recordOf(event, this.holder);
    if (record !== null) this.report(record);
  }

  /** Says how many records of each kind were suppressed and not yet told (at stop). */
  flush(): void {
    for (const [kind, window] of this.windows) {
      if (window.suppressed === 0) continue;
      this.emit({
        level: 'warn',
        kind,
        holder: this.holder,
        message: `${window.suppressed} more ${kind} records were suppressed`,
        suppressed: window.suppressed,
      });
      window.suppressed = 0;
    }
  }

  private report(record: WorkerLogRecord): void {
    const now = this.readNow();
    let window = this.windows.get(record.kind);
    if (window === undefined || !(now - window.startedAt < LOG_LIMIT.windowMs)) {
      const suppressed = window?.suppressed ?? 0;
      window = { startedAt: now, reported: 0, suppressed: 0 };
      this.windows.set(record.kind, window);
      if (suppressed > 0) record = { ...record, suppressed, message: `${record.message} (${suppressed} more like it were suppressed)` };
    }
    if (window.reported >= LOG_LIMIT.records) {
      window.suppressed++;
      return;
    }
    window.reported++;
    this.emit(record);
  }

  /** A logger that throws or (async) rejects: its own fault; the worker carries on. */
  private emit(record: WorkerLogRecord): void {
    callListener(this.logger, [record], () => {});
  }

  /** The store clock; a queue that cannot tell the time puts every record in one window. */
  private readNow(): number {
    try {
      const now = this.now();
      return Number.isFinite(now) ? now : 0;
    } catch {
      return 0;
    }
  }
}

/** The default logger: one line per record on stderr. */
export function stderrLogger(record: WorkerLogRecord): void {
  process.stderr.write(`runlog worker ${record.holder} ${record.level}: ${record.message}\n`);
}

function recordOf(event: WorkerEvent, holder: string): WorkerLogRecord | null {
  if (event.type === 'error') {
    const error = describeError(event.error);
    return { level: 'error', kind: 'worker-error', holder, error, message: `${event.context} failed: ${error}` };
  }
  // Most events are runs that succeeded or were deferred: nothing to tell, nothing to build.
  if (!('attempt' in event) || event.type === 'succeeded' || event.type === 'deferred') return null;
  const run = { holder, entryId: event.entryId, agent: event.agent, attempt: event.attempt };
  const entry = `entry ${event.entryId} (agent ${event.agent})`;
  const error = event.error ?? null;
  switch (event.type) {
    case 'retried':
      return {
        level: 'warn',
        kind: 'attempt-failed',
        ...run,
        error,
        message: `attempt ${event.attempt} of ${entry} failed, will retry: ${error ?? 'no error text'}`,
      };
    case 'parked':
      return {
        level: 'error',
        kind: 'parked',
        ...run,
        error,
        message: `${entry} is parked after attempt ${event.attempt}: ${error ?? 'no error text'}`,
      };
    case 'abandoned':
      return {
        level: 'error',
        kind: 'abandoned',
        ...run,
        error,
        message: `the handler of ${entry} did not settle within the grace period after its signal aborted; its lease is left to expire`,
      };
    case 'lost':
      return {
        level: 'warn',
        kind: 'lease-lost',
        ...run,
        error,
        message: `attempt ${event.attempt} of ${entry} lost its lease or the entry was closed under it; its outcome was not recorded`,
      };
    default:
      return null;
  }
}

/** An Error's name, code and message; anything else (or an Error whose fields cannot be read) as describe() shows it. */
function describeError(error: unknown): string {
  try {
    if (error instanceof Error) return `${error.name}${'code' in error ? ` ${describeCode(error.code)}` : ''}: ${error.message}`;
  } catch {
    // A throwing getter or proxy trap: fall through to describe(), which runs no caller code.
  }
  return describe(error);
}

function describeCode(code: unknown): string {
  return typeof code === 'string' ? code : describe(code);
}
