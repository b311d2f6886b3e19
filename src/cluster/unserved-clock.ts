/**
 * How long each partition went unserved, as this node can know it: from the moment the node
 * learned the partition had no serving owner to the moment it serves here. The node learns
 * it when it releases the partition itself (revoked, its membership lost, fenced) or when a
 * new generation hands it a partition another node (or nobody) owned in the generation
 * before: its previous owner stopped serving then at the latest. What happened before the
 * node could know (a dead owner's session running out at the coordinator) is not in it:
 * the cluster test measures that from outside (the kill to the serving line).
 */
export class UnservedClock {
  /** Per partition, the monotonic ms since which this node knows it unserved (the earliest mark kept). */
  readonly #since = new Map<number, number>();

  constructor(private readonly now: () => number) {}

  /** The partition is unserved from now on, unless it was known to be since earlier. */
  mark(partition: number): void {
    if (!this.#since.has(partition)) this.#since.set(partition, this.now());
  }

  /** The partition is another node's to measure. */
  forget(partition: number): void {
    this.#since.delete(partition);
  }

  /** The partition serves here: how long it went unserved (0 if it was not known to be), and the mark is cleared. */
  served(partition: number): number {
    const since = this.#since.get(partition);
    this.#since.delete(partition);
    return since === undefined ? 0 : Math.max(0, Math.round(this.now() - since));
  }
}
