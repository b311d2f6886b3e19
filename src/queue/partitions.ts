/**
 * A queue's partitions and what spans them: the partition a (tenant, thread) or a ticket
 * routes to, the best head across partitions for a take, pruning oldest closes first, the
 * expiry of overdue entries, the open counts, nextDueAt and the summed metrics. (Where partitions shared
 * by several processes would be routed.)
 */
import type { RunlogError } from '../errors.ts';
import { partitionOf } from '../log/partitioner.ts';
import type { EntryState } from '../../projections/entry-state.ts';
import { takesBefore } from '../../projections/head-index.ts';
import { addMetrics, emptyMetrics, type MetricCounters } from '../../projections/metrics.ts';
import { requireName } from '../validation/index.ts';
import { isPrunable } from './decide.ts';
import { partitionOfEntryId } from './entry-id.ts';
import type { Partition } from './partition.ts';

export class Partitions {
  constructor(readonly all: readonly Partition[]) {}

  /** The partition of (tenant, thread): murmur2 of both, as Kafka's default partitioner. */
  of(tenant: string, thread: string): Partition {
    return this.all[partitionOf(tenant, thread, this.all.length)]!;
  }

  /** The partition of `tenant`'s entry `entryId` (the tenant is checked here; isolation is the decider's). */
  ofEntry(tenant: string, entryId: string): Partition {
    requireName('tenant', tenant);
    return this.all[partitionOfEntryId(entryId, this.all.length)]!;
  }

  /** The partition of an entry id this queue issued itself (a lease it answered): one partition needs no parse. */
  ofIssued(entryId: string): Partition {
    return this.all.length === 1 ? this.all[0]! : this.all[partitionOfEntryId(entryId, this.all.length)]!;
  }

  /**
   * Each partition's time (Partition.now), read once per partition and then kept: a take
   * judges a partition's heads and decides on them at one time. Partitions' times differ by
   * their leads (partition-lead.ts).
   */
  times(): (partition: Partition) => number {
    const read = new Map<Partition, number>();
    return (partition) => {
      let now = read.get(partition);
      if (now === undefined) read.set(partition, (now = partition.now()));
      return now;
    };
  }

  /** The head a take of `agents` and `tenants` (null: any tenant) leases first, of the partitions that serve, each judged at its time `now`. */
  bestHead(
    agents: readonly string[],
    now: (partition: Partition) => number,
    tenants: readonly string[] | null,
  ): [Partition, EntryState] | undefined {
    let best: [Partition, EntryState] | undefined;
    for (const partition of this.all) {
      if (!partition.serving) continue;
      const candidate = partition.view.bestHead(agents, now(partition), tenants);
      if (candidate !== undefined && (best === undefined || takesBeforeAcross([partition, candidate], best))) best = [partition, candidate];
    }
    return best;
  }

  /**
   * Prunes the `limit` oldest closes at least `lifetimeMs` ago across partitions (each by its
   * time: partition-lead.ts); answers how many were pruned. Each partition decides its share
   * (one being rebuilt, once it serves again), and tombstones up to `limit` of its loose
   * answers (refusals) last answered that long ago.
   */
  async prune(lifetimeMs: number, limit: number): Promise<number> {
    const closedByOf = new Map(this.all.map((partition) => [partition, partition.now() - lifetimeMs]));
    const due = this.#owned()
      .flatMap((partition) => {
        const closedBy = closedByOf.get(partition)!;
        const oldest = partition.view.oldestClosed(limit, (entry) => isPrunable(entry, closedBy));
        return oldest.map((entry) => ({ partition, entry, closedAt: partition.toStoreTime(entry.closedAt!) }));
      })
      .sort((a, b) => a.closedAt - b.closedAt)
      .slice(0, limit);
    const perPartition = new Map<Partition, number>();
    for (const { partition } of due) perPartition.set(partition, (perPartition.get(partition) ?? 0) + 1);
    for (const partition of this.all) {
      const closedBy = closedByOf.get(partition)!;
      if (!perPartition.has(partition) && partition.view.answers.looseDue(closedBy, 1).length > 0) perPartition.set(partition, 0);
    }
    const pruned = [...perPartition].map(([partition, count]) => {
      const command = { type: 'Prune', closedBy: closedByOf.get(partition)!, limit: count, answerLimit: limit } as const;
      return partition.run(command, ({ events }) => events[0]?.entryIds.length ?? 0);
    });
    return sum(await Promise.all(pruned));
  }

  /** Closes `expired` every open entry whose start deadline passed unstarted, in every partition this queue owns; answers how many. */
  async expireOverdue(): Promise<number> {
    return sum(await Promise.all(this.#owned().map((partition) => partition.run({ type: 'Expire' }, ({ events }) => events.length))));
  }

  /**
   * The partitions a sweep covers: all but those another node owns (ownership 'assigned'),
   * which would refuse it with NotOwner, failing every sweep of a cluster node.
   */
  /**
   * Why a take can take nothing, whatever it waits for: every partition this queue owns is down
   * (its error, the first's); null while one serves or may serve again (rebuilding). Answered
   * "nothing to take" instead, a Worker would wait on a queue that can never hand it anything,
   * and say nothing (the hostile tester, 2026-12-07).
   */
  allDown(): RunlogError | null {
    let first: RunlogError | null = null;
    for (const partition of this.#owned()) {
      const down = partition.downError;
      if (down === null) return null;
      first ??= down;
    }
    return first;
  }

  /**
   * Resolves once the appends in flight now on the partitions this queue owns are durable: true,
   * or false if one failed (an answer of nothing, a take's, may have rested on it), once its
   * partition serves again (or is down).
   */
  async settledWithoutFailure(): Promise<boolean> {
    // Those serving now: a writer that failed already (its partition draining or rebuilding) says nothing of now.
    const serving = this.#owned().filter((partition) => partition.serving);
    const durable = await Promise.all(serving.map((partition) => partition.durable()));
    const failed = serving.filter((_, i) => !durable[i]);
    // Once rebuilt (or down: the caller's next try says so), what the failed append held is to be found again.
    await Promise.all(failed.map((partition) => partition.ready().catch(() => undefined)));
    return failed.length === 0;
  }

  #owned(): Partition[] {
    return this.all.filter((partition) => !partition.unowned);
  }

  openOf(tenant: string): number {
    return this.all.reduce((sum, partition) => sum + (partition.view.openByTenant.get(tenant) ?? 0), 0);
  }

  openTotal(): number {
    return this.all.reduce((sum, partition) => sum + partition.view.openCount, 0);
  }

  /** When the next head of `agents` and `tenants` (null: any tenant) becomes takeable, across partitions, in store time (passed already when one is takeable now); or null. */
  nextDueAt(agents: readonly string[], tenants: readonly string[] | null): number | null {
    let earliest: number | null = null;
    for (const partition of this.all) {
      const due = partition.view.nextDueAt(agents, tenants);
      const at = due === null ? null : partition.toStoreTime(due);
      if (at !== null && (earliest === null || at < earliest)) earliest = at;
    }
    return earliest;
  }

  counters(): MetricCounters {
    const counters = emptyMetrics();
    for (const partition of this.all) addMetrics(counters, partition.view.metrics);
    return counters;
  }
}

/**
 * The take order (takesBefore) of heads of two partitions: their submission times are each in
 * its partition's time, compared in store time (partition-lead.ts); of one partition, as stored.
 */
function takesBeforeAcross([xp, x]: [Partition, EntryState], [yp, y]: [Partition, EntryState]): boolean {
  if (xp === yp || x.priority !== y.priority) return takesBefore(x, y);
  const [xAt, yAt] = [xp.toStoreTime(x.submittedAt), yp.toStoreTime(y.submittedAt)];
  return xAt !== yAt ? xAt < yAt : takesBefore(x, y);
}

function sum(counts: number[]): number {
  return counts.reduce((a, b) => a + b, 0);
}
