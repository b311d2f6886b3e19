/**
 * One thread's open entries in run order (the view drops a thread once none is open). Closed
 * entries are skipped lazily at the head (an entry in the middle may close first: cancel,
 * expiry, thread deletion), and the array is trimmed once enough closed entries have piled
 * up in front of the head. Run ids are those of its open entries' attempts (a closed entry's
 * are in the ticket index).
 */
import type { TenantCounter } from './tenant-counts.ts';

/** What a thread reads of its entries (EntryState is one; declared here so this file imports no entry). */
export interface ThreadMember {
  readonly closed: boolean;
}

const NO_RUN_IDS: ReadonlyMap<string, string> = new Map();

export class ThreadState<E extends ThreadMember> {
  private queue: E[] = [];
  private start = 0;
  openCount = 0;
  /** Allocated on the first attempt: most threads of a large backlog never ran. */
  #runIds: Map<string, string> | null = null;

  constructor(
    readonly tenant: string,
    readonly thread: string,
    /** The open entries of the thread's tenant, across the partition's threads. */
    readonly tenantOpen: TenantCounter,
    /** Its key in the view's threads (events/keys.ts threadKey), made once: hashed once, not per entry that leaves. */
    readonly key: string,
  ) {}

  /** Run ids of every attempt on the thread, to their entry: a run id names one run. */
  get runIds(): ReadonlyMap<string, string> {
    return this.#runIds ?? NO_RUN_IDS;
  }

  addRunId(runId: string, entryId: string): void {
    (this.#runIds ??= new Map()).set(runId, entryId);
  }

  deleteRunId(runId: string): void {
    this.#runIds?.delete(runId);
  }

  append(entry: E): void {
    this.queue.push(entry);
    this.openCount++;
  }

  /** The first open entry: the only one that may run. */
  head(): E | undefined {
    while (this.start < this.queue.length && this.queue[this.start]!.closed) this.start++;
    this.trim();
    return this.queue[this.start];
  }

  openEntries(): E[] {
    return this.queue.slice(this.start).filter((entry) => !entry.closed);
  }

  private trim(): void {
    if (this.start < 64 || this.start * 2 < this.queue.length) return;
    this.queue = this.queue.slice(this.start);
    this.start = 0;
  }
}
