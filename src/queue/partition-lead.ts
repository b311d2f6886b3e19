/**
 * How far a partition's time runs ahead of the queue's store clock (store-clock.ts).
 *
 * A cluster node that acquires a partition, or a queue that opens owning every partition of a
 * log a cluster wrote, may find it stamped by a node whose clock ran ahead of its own: its
 * events' times must never decrease (store-clock.ts rule 1), so the partition's time starts at
 * its latest event. Raising the queue's one store clock instead
 * would move the time of every other partition it serves by the same jump, and expire the
 * leases it granted there early (a second worker would run an entry whose first worker still
 * runs it). So the lead is the partition's alone: its time is store time plus the lead, and
 * every lease, backoff and deadline on it is judged in that time, at the store clock's rate,
 * so each lasts its real length (rule 3). Like a stepped store clock (rule 4), the lead
 * shrinks at 500 ppm of the time that passes (0.5 s per 1,000 s), never making the
 * partition's time go back.
 */

/** The rate a lead shrinks at, as store-clock.ts slews a stepped clock. */
const SLEW_RATE = 500e-6;

export class PartitionLead {
  /** ms ahead of store time (0: none); fractional while it slews. */
  #lead = 0;
  /** The store time of the last reading, from which the next reading's slew is measured. */
  #lastStoreTime = 0;

  /** The partition's time at store time `storeTime` (whole ms; never less than a previous answer). */
  at(storeTime: number): number {
    const passed = storeTime - this.#lastStoreTime;
    if (passed > 0) {
      this.#lead = Math.max(0, this.#lead - SLEW_RATE * passed);
      this.#lastStoreTime = storeTime;
    }
    return Math.floor(storeTime + this.#lead);
  }

  /** The lead now, in whole ms. */
  get ms(): number {
    return Math.round(this.#lead);
  }

  /**
   * The partition serves from a view whose latest event is at `lastAt`, at store time
   * `storeTime`: its time starts no earlier than that event. `kept`: the view is this queue's own
   * (a rebuild), so the lead it had holds too (its leases were judged in that time); otherwise
   * (an acquire) the lead is the view's alone. Answers the lead in whole ms.
   */
  follow(lastAt: number, storeTime: number, kept: boolean): number {
    const own = kept ? this.at(storeTime) - storeTime : 0;
    this.#lead = Math.max(own, lastAt - storeTime, 0);
    this.#lastStoreTime = storeTime;
    return this.ms;
  }

  /** A time given in store time (a caller's notBefore or deadline, already from the wall) in the partition's time. */
  ahead(at: number): number {
    return at + this.ms;
  }

  /** A time of the partition's in store time (comparable across partitions). */
  behind(at: number): number {
    return at - this.ms;
  }
}
