/** What any caller may ask of the queue itself: metrics (unscoped tokens only), health, the store clock, who serves which partition. */
import { RunlogError } from '../../errors.ts';
import type { QueueMetrics } from '../../queue/types.ts';
import { healthToJson, type ClusterAnswer, type PartitionHealthJson } from '../../wire/index.ts';
import type { RouteRequest } from '../route.ts';

/** The counts span every tenant, so a token scoped to some may not read them: nothing crosses tenants. */
export async function metrics({ queue, caller }: RouteRequest): Promise<QueueMetrics> {
  if (caller.tenants !== 'all') {
    throw new RunlogError(
      'Forbidden',
      `${caller.name} may not read the queue's metrics: they count every tenant, and its token is scoped to some`,
    );
  }
  return queue.metrics();
}

export async function health({ queue }: RouteRequest): Promise<{ partitions: PartitionHealthJson[] }> {
  return { partitions: (await queue.health()).map(healthToJson) };
}

/** Who serves which partition: a client of a cluster routes each call to its partition's owner by it. */
export async function cluster({ cluster }: RouteRequest): Promise<ClusterAnswer> {
  return cluster.describe();
}

export async function now({ queue }: RouteRequest): Promise<{ now: number }> {
  return { now: queue.now() };
}
