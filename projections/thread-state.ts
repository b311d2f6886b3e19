/**
 * One thread's open entries in run order (the view drops a thread once none is open, or at the
 * end of a catch-up that emptied it: an entry appended to an emptied thread starts it afresh). Closed
 * entries are skipped lazily at the head (an entry in the middle may close first: cancel,
 * expiry, thread deletion), and the array is trimmed once enough closed entries have piled
 * up in front of the head.
 *
 * Run ids: only a thread's head is leased, so only its head starts attempts, and it stays the
 * head until it closes: the run ids of a thread's open entries are its head's (a closed entry's
 * are in the ticket index). So they are looked up in the head's attempts, not kept in a map per
 * thread (a Map made, filled and dropped per lifecycle). An attempt folded on an entry that is
 * not the head (a log not written through decide) is remembered aside, so the lookup stays whole.
 */
import { listOf } from '../src/plain-objects.ts';
import { hash32Seed } from './hash32.ts';
import type { TenantCounter } from './tenant-counts.ts';

/** The queue of a thread none of whose entries is open (frozen: a stray push throws). */
const NO_ENTRIES: readonly ThreadMember[] = Object.freeze([]);

/** What a thread reads of its entries (EntryState is one; declared here so this file imports no entry). */
export interface ThreadMember {
  readonly closed: boolean;
  readonly entryId: string;
  readonly attempts: readonly { readonly runId: string }[];
}

export class ThreadState<E extends ThreadMember> {
  private queue: E[] = [];
  private start = 0;
  openCount = 0;
  /** Entries that started an attempt while not the head (never, through decide); null while none. */
  #offHead: E[] | null = null;
  /** hash32Seed(tenant, thread), once asked (hashSeed). */
  #hashSeed: number | undefined = undefined;

  constructor(
    readonly tenant: string,
    readonly thread: string,
    /** The open entries of the thread's tenant, across the partition's threads. */
    readonly tenantOpen: TenantCounter,
  ) {}

  /**
   * Where the ticket index's hashes of this thread's run ids and submission keys start
   * (hash32.ts hash32Seed): a replay keeps a thread through its entries, and hashed its
   * tenant and thread again at every close (~2% of a 1M-event cold start, 2026-12-07).
   */
  get hashSeed(): number {
    return (this.#hashSeed ??= hash32Seed(this.tenant, this.thread));
  }

  /** Run ids of every attempt of the thread's open entries, to their entry (a copy: for inspection). */
  get runIds(): ReadonlyMap<string, string> {
    const runIds = new Map<string, string>();
    for (const entry of this.openEntries()) for (const attempt of entry.attempts) runIds.set(attempt.runId, entry.entryId);
    return runIds;
  }

  /** The open entry of this thread that ran `runId`, or undefined: a run id names one run. */
  runUser(runId: string): string | undefined {
    const head = this.head();
    if (head !== undefined) for (const attempt of head.attempts) if (attempt.runId === runId) return head.entryId;
    if (this.#offHead === null) return undefined;
    for (const entry of this.#offHead) if (!entry.closed && entry.attempts.some((attempt) => attempt.runId === runId)) return entry.entryId;
    return undefined;
  }

  /** `entry`, one of this thread's, just started an attempt. */
  attemptAdded(entry: E): void {
    if (entry !== this.head()) (this.#offHead ??= []).push(entry);
  }

  append(entry: E): void {
    // A thread's first entry gets an array of one (a push onto [] reserves 17 slots: most threads hold one entry); so
    // does the first after all its entries closed (a view's catch-up keeps an emptied thread: partition-view.ts indexHeads).
    // listOf, not [entry]: a literal would be pretenured after a backlog (src/plain-objects.ts).
    if (this.openCount === 0) {
      this.queue = listOf(entry);
      this.start = 0;
      this.#offHead = null;
    } else this.queue.push(entry);
    this.openCount++;
  }

  /**
   * One of its open entries closed. Once none is open its entries (all closed) are let go: a
   * catch-up keeps an emptied thread for its next entry (partition-view.ts indexHeads), and
   * with its closed entries held, every thread of a replay kept its last entry alive, input and
   * all, until the thread's next one came (1,000 threads: ~400 KB live at each scavenge, copied,
   * much of it promoted to die in the old generation).
   */
  entryClosed(): void {
    if (--this.openCount > 0) return;
    this.queue = NO_ENTRIES as E[]; // never pushed onto: append replaces it (openCount is 0)
    this.start = 0;
    this.#offHead = null;
  }

  /** The first open entry: the only one that may run. */
  head(): E | undefined {
    while (this.start < this.queue.length && this.queue[this.start]!.closed) this.start++;
    this.trim();
    return this.queue[this.start];
  }

  /** Its open entries, head first: one array of openCount items (a snapshot lists every thread's). */
  openEntries(): E[] {
    const open: E[] = new Array(this.openCount);
    let count = 0;
    for (let i = this.start; i < this.queue.length; i++) {
      const entry = this.queue[i]!;
      if (!entry.closed) open[count++] = entry;
    }
    open.length = count;
    return open;
  }

  private trim(): void {
    if (this.start < 64 || this.start * 2 < this.queue.length) return;
    this.queue = this.queue.slice(this.start);
    this.start = 0;
  }
}
