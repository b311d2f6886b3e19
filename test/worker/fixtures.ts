/**
 * Helpers for worker suites: manual timers with the fake store clock, reopenable logs, event waits.
 * Like the RunQueue suite's fixture, a backend may put a transport in front of the queue: the
 * workers and the tests then call that (`queue`), and read the log through `local`.
 */
import type { TestContext } from 'node:test';
import type { EventLog } from '../../src/log/event-log.ts';
import { type RunQueue } from '../../src/queue/run-queue.ts';
import { openRunQueueOnLog } from '../../src/queue/open-run-queue.ts';
import type { Timers, WorkerEvent, WorkerOptions } from '../../src/worker/types.ts';
import { Worker } from '../../src/worker/worker.ts';
import { FakeClock, inProcess, type Transport, type Transported } from '../contract/fixtures.ts';
import type { RunQueueApi } from '../../src/queue/types.ts';
import { onCleanup } from '../support/cleanup.ts';
import { wrapLog } from '../support/wrap-log.ts';
import { openMemoryLog } from '../../src/log/memory/memory-log.ts';

/** A log that can be opened again on the same storage (to restart a queue on it). */
export interface ReopenableLog {
  open(): Promise<EventLog>;
}

export type OpenWorkerLog = (partitions: number, t: TestContext) => Promise<ReopenableLog>;

/** A backend of the worker suite: its log, and what the workers call (the RunQueue itself unless given). */
export interface WorkerBackend {
  openLog: OpenWorkerLog;
  transport?: Transport;
}

/** A memory log that outlives a queue's stop: each open hands out a view whose close does nothing. */
export async function reopenableMemoryLog(partitions: number): Promise<ReopenableLog> {
  const view = wrapLog(await openMemoryLog({ partitions }), { close: async () => {} });
  return { open: async (): Promise<EventLog> => view };
}

/** Timers that fire only when advanced: fake real time. */
export class ManualTimers implements Timers {
  nowMs = 0;
  private nextId = 1;
  private readonly pending = new Map<number, { at: number; callback: () => void }>();

  setTimeout(callback: () => void, ms: number): unknown {
    const id = this.nextId++;
    this.pending.set(id, { at: this.nowMs + Math.max(0, ms), callback });
    return id;
  }

  clearTimeout(handle: unknown): void {
    this.pending.delete(handle as number);
  }

  /** Moves time on by `ms`, firing every timer due by then, earliest first. */
  advance(ms: number): void {
    const target = this.nowMs + ms;
    for (;;) {
      let first: [number, { at: number; callback: () => void }] | undefined;
      for (const item of this.pending) if (item[1].at <= target && (first === undefined || item[1].at < first[1].at)) first = item;
      if (first === undefined) break;
      this.pending.delete(first[0]);
      this.nowMs = first[1].at;
      first[1].callback();
    }
    this.nowMs = target;
  }
}

/** The store clock and the timers moved together. */
export class FakeTime {
  constructor(
    readonly clock: FakeClock,
    readonly timers = new ManualTimers(),
  ) {}

  advance(ms: number): void {
    this.clock.advance(ms);
    this.timers.advance(ms);
  }
}

/** Records a worker's events; `next` waits for the first unseen one matching. */
export class EventRecorder {
  readonly events: WorkerEvent[] = [];
  private readonly waiters = new Set<() => void>();
  private readonly consumed = new Set<number>();

  readonly listener = (event: WorkerEvent): void => {
    this.events.push(event);
    for (const waiter of [...this.waiters]) waiter();
  };

  next(match: (event: WorkerEvent) => boolean): Promise<WorkerEvent> {
    return new Promise((resolve) => {
      const look = (): void => {
        const index = this.events.findIndex((event, i) => !this.consumed.has(i) && match(event));
        if (index < 0) return;
        this.consumed.add(index);
        this.waiters.delete(look);
        resolve(this.events[index]!);
      };
      this.waiters.add(look);
      look();
    });
  }

  of(type: WorkerEvent['type']): WorkerEvent[] {
    return this.events.filter((event) => event.type === type);
  }
}

export const ofType = (type: WorkerEvent['type'], entryId?: string) => (event: WorkerEvent) =>
  event.type === type && (entryId === undefined || ('entryId' in event && event.entryId === entryId));

export interface WorkerFixture {
  /** The API the workers and the test call: the RunQueue itself in process, or the transport in front of it. */
  queue: RunQueueApi;
  /** The RunQueue in this process (its log, views). */
  local: RunQueue;
  log: ReopenableLog;
  clock: FakeClock;
  /** Opens a worker with its own manual timers and event recorder, stopped after the test. */
  worker(options?: WorkerOptions): { worker: Worker; time: FakeTime; events: EventRecorder; start(): RunningWorker };
  /** Stops the queue (and its transport) and opens a new one on the same log, at the same store time. */
  reopen(): Promise<RunQueueApi>;
}

export interface RunningWorker {
  stop(): Promise<void>;
  done: Promise<void>;
}

export async function workerOn(
  backend: WorkerBackend,
  t: TestContext,
  options: { partitions?: number; maxInputBytes?: number } = {},
): Promise<WorkerFixture> {
  const runs: RunningWorker[] = [];
  const opened: { local: RunQueue; transported?: Transported }[] = [];
  const log = await backend.openLog(options.partitions ?? 4, t);
  // Cleanups run last-registered first: workers, transports and queues stop before openLog's own cleanup removes the files.
  onCleanup(t, async () => {
    await Promise.all(runs.map((run) => run.stop()));
    for (const { local, transported } of opened) await stopBoth(local, transported);
  });
  const clock = new FakeClock();
  const open = async (): Promise<{ local: RunQueue; queue: RunQueueApi }> => {
    const local = await openRunQueueOnLog(await log.open(), {
      clock: clock.read,
      ...(options.maxInputBytes ? { maxInputBytes: options.maxInputBytes } : {}),
    });
    const item: { local: RunQueue; transported?: Transported } = { local };
    opened.push(item);
    item.transported = await (backend.transport ?? inProcess)(local, clock);
    return { local, queue: item.transported.queue };
  };
  const first = await open();
  const fixture: WorkerFixture = {
    queue: first.queue,
    local: first.local,
    log,
    clock,
    worker(workerOptions = {}) {
      const time = new FakeTime(clock);
      const events = new EventRecorder();
      // The suites check events; the default logger's stderr lines would only be noise here (report.test.ts tests it).
      const worker = new Worker(fixture.queue, { timers: time.timers, onEvent: events.listener, logger: () => {}, ...workerOptions });
      return {
        worker,
        time,
        events,
        start: () => {
          const run = start(worker);
          runs.push(run);
          return run;
        },
      };
    },
    async reopen() {
      const current = opened.at(-1)!;
      await stopBoth(current.local, current.transported);
      const next = await open();
      fixture.queue = next.queue;
      fixture.local = next.local;
      return fixture.queue;
    },
  };
  return fixture;
}

/** Takes the transport down, then stops the queue (each once: stopping again is a no-op). */
async function stopBoth(local: RunQueue, transported: Transported | undefined): Promise<void> {
  try {
    await transported?.close();
  } finally {
    await local.stop();
  }
}

function start(worker: Worker): RunningWorker {
  const controller = new AbortController();
  const done = worker.run(controller.signal);
  const stop = async (): Promise<void> => {
    controller.abort();
    await done;
  };
  return { stop, done };
}

/** A promise with its resolve and reject. */
export function deferred<T = void>(): { promise: Promise<T>; resolve: (value: T) => void; reject: (error: unknown) => void } {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** Lets pending I/O callbacks and promise chains run (not a timed sleep). */
export async function turns(n: number): Promise<void> {
  for (let i = 0; i < n; i++) await new Promise((resolve) => setImmediate(resolve));
}
