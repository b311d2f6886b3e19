/** Callers of awaitClosed, woken by closes (never by polling). */
import type { RunlogEvent } from '../events/types.ts';
import type { ClosedEntry } from '../../projections/closed-entry.ts';
import type { PartitionView } from '../../projections/partition-view.ts';
import { isClosing } from './decide.ts';
import { toPublicEntry } from './public-entry.ts';
import type { Entry } from './types.ts';

type Waiter = (entry: Entry | null, error?: unknown) => void;

/** Nothing closed that anyone awaits: one shared, frozen empty array. */
const NONE_CLOSED: readonly ClosedEntry[] = Object.freeze([]);

export class ClosedWaiters {
  private readonly byEntry = new Map<string, Set<Waiter>>();

  /** Waits for `entryId` to close; null on timeout; rejects when the signal aborts. */
  wait(entryId: string, signal: AbortSignal | undefined, timeoutMs: number | undefined): Promise<Entry | null> {
    return new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const timer = timeoutMs === undefined ? undefined : setTimeout(() => settle(null), timeoutMs);
      const onAbort = (): void => settle(null, signal!.reason);
      const settle: Waiter = (entry, error) => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        this.remove(entryId, settle);
        if (error !== undefined) reject(error);
        else resolve(entry);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.add(entryId, settle);
    });
  }

  has(entryId: string): boolean {
    return this.byEntry.has(entryId);
  }

  /** Wakes every waiter of `entryId`, each with an entry of its own (`answer` builds one per call). */
  wake(entryId: string, answer: () => Entry): void {
    for (const waiter of this.byEntry.get(entryId) ?? []) waiter(answer());
  }

  /** The entries closed by `events` that someone awaits, taken from the view when the events are folded (closed entries never change again). */
  awaitedIn(view: PartitionView, events: RunlogEvent[]): readonly ClosedEntry[] {
    let closed: ClosedEntry[] | null = null; // made only when someone awaits (most commands close nothing awaited)
    for (const event of events) {
      if (!isClosing(event) || !this.has(event.entryId)) continue;
      const entry = view.unsettledEntry(event.entryId);
      if (entry !== undefined) (closed ??= []).push(entry);
    }
    return closed ?? NONE_CLOSED;
  }

  /** Wakes the waiters of `closed` (once their closes are durable), each with an entry of its own. */
  wakeAll(closed: readonly ClosedEntry[]): void {
    for (const entry of closed) this.wake(entry.entryId, () => toPublicEntry(entry));
  }

  failAll(error: unknown): void {
    for (const waiters of [...this.byEntry.values()]) for (const waiter of waiters) waiter(null, error);
  }

  private add(entryId: string, waiter: Waiter): void {
    let waiters = this.byEntry.get(entryId);
    if (waiters === undefined) this.byEntry.set(entryId, (waiters = new Set()));
    waiters.add(waiter);
  }

  private remove(entryId: string, waiter: Waiter): void {
    const waiters = this.byEntry.get(entryId);
    waiters?.delete(waiter);
    if (waiters?.size === 0) this.byEntry.delete(entryId);
  }
}
