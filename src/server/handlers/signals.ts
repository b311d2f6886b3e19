/** What any caller may ask of the queue itself: metrics, health, the store clock. */
import type { QueueMetrics } from '../../queue/types.ts';
import { healthToJson, type PartitionHealthJson } from '../../wire/index.ts';
import type { RouteRequest } from '../route.ts';

export async function metrics({ queue }: RouteRequest): Promise<QueueMetrics> {
  return queue.metrics();
}

export async function health({ queue }: RouteRequest): Promise<{ partitions: PartitionHealthJson[] }> {
  return { partitions: (await queue.health()).map(healthToJson) };
}

export async function now({ queue }: RouteRequest): Promise<{ now: number }> {
  return { now: queue.now() };
}
