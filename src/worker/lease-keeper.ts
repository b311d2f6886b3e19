/**
 * Keeps one run's lease current while its handler works.
 *
 *   held --(every half lease: extend answered)----------------> held, expiresAt moved on
 *   held --(extend refused LeaseNotCurrent / EntryClosed)------> lost: onLost(reason)
 *   held --(entry closed under us: cancel, thread deleted)-----> lost: markLost(reason)
 *   held --(extend failed otherwise, e.g. log unavailable)-----> held, retried at a quarter
 *          lease; lost once the store clock reaches expiresAt without a renewal
 *   held --(renewal due after the store clock passed expiresAt)-> lost at once, no extend sent
 *          (the process stalled past its lease)
 *   any  --stop()----------------------------------------------> stopped: no timer left, an
 *          extend in flight awaited, the latest lease answered (for close or yield)
 *
 * Renewals are scheduled with the (possibly fake) timers. Expiry is judged by the store clock,
 * queue.now(), from the time the call that granted or extended the lease was sent: the lease
 * runs out no sooner than that plus its length. Not by the lease's expiresAt, which is in its
 * partition's time: a partition acquired from a node whose clock ran ahead runs ahead of
 * queue.now() (src/queue/partition-lead.ts), and a worker comparing the two would hold on to a
 * lease the queue has handed to another. A lost lease is never renewed again: another worker
 * may hold the entry by then.
 */
import { RunlogError, isRunlogError } from '../errors.ts';
import type { Lease, RunQueueApi } from '../queue/types.ts';
import type { Timers, WorkerEvent } from './types.ts';

export class LeaseKeeper {
  lost: RunlogError | null = null;
  private handle: unknown = undefined;
  private stopped = false;
  private renewing: Promise<void> = Promise.resolve();
  /** Store time (queue.now()) by which the lease has run out unless renewed: the ask's time plus its length. */
  private expiresBy: number;

  constructor(
    private readonly queue: RunQueueApi,
    public lease: Lease,
    private readonly ttlMs: number,
    private readonly timers: Timers,
    private readonly onLost: (reason: RunlogError) => void,
    private readonly onEvent: (event: WorkerEvent) => void,
    /** queue.now() read before the call that granted `lease` was sent. */
    askedAt: number,
  ) {
    this.expiresBy = askedAt + ttlMs;
  }

  start(): void {
    this.schedule(Math.max(1, Math.floor(this.ttlMs / 2)));
  }

  /** The lease is gone for a reason found elsewhere (the entry closed while it ran). */
  markLost(reason: RunlogError): void {
    if (this.lost !== null || this.stopped) return;
    this.lost = reason;
    this.timers.clearTimeout(this.handle);
    this.onLost(reason);
  }

  async stop(): Promise<Lease> {
    this.stopped = true;
    this.timers.clearTimeout(this.handle);
    await this.renewing;
    return this.lease;
  }

  private schedule(ms: number): void {
    if (this.stopped || this.lost !== null) return;
    this.handle = this.timers.setTimeout(() => {
      this.renewing = this.renew();
    }, ms);
  }

  private async renew(): Promise<void> {
    // Already run out (the process stalled past it: a pause, SIGSTOP): lost at once, not after an extend's round trip,
    // so that the handler is told before it goes on beside the worker the queue may have handed the entry to.
    if (this.queue.now() >= this.expiresBy) return this.markLost(this.ranOut(null));
    try {
      const askedAt = this.queue.now();
      this.lease = await this.queue.extend(this.lease, this.ttlMs);
      this.expiresBy = askedAt + this.ttlMs;
      this.onEvent({ type: 'renewed', entryId: this.lease.entryId, expiresAt: this.lease.expiresAt });
      this.schedule(Math.max(1, Math.floor(this.ttlMs / 2)));
    } catch (error) {
      if (isRunlogError(error, 'LeaseNotCurrent') || isRunlogError(error, 'EntryClosed')) return this.markLost(error);
      this.onEvent({ type: 'error', error, context: `renewing the lease on entry ${this.lease.entryId}` });
      if (this.queue.now() >= this.expiresBy) return this.markLost(this.ranOut(error));
      this.schedule(Math.max(1, Math.floor(this.ttlMs / 4)));
    }
  }

  /** Why the lease is lost once the store clock passed expiresBy without a renewal (`error`: the failed renewal's). */
  private ranOut(error: unknown): RunlogError {
    const message = `the lease on entry ${this.lease.entryId} ran out (store time ${this.expiresBy}) before it could be renewed`;
    return new RunlogError('LeaseNotCurrent', message, error === null ? {} : { cause: error });
  }
}
