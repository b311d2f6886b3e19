/** Unauthenticated probes: the process serves HTTP (/healthz); every partition serves (/readyz). */
import { healthToJson, type PartitionHealthJson } from '../../wire/index.ts';
import { Reply, type RouteRequest } from '../route.ts';

export async function healthz(): Promise<{ status: 'ok' }> {
  return { status: 'ok' };
}

export async function readyz({ queue }: RouteRequest): Promise<Reply> {
  const partitions: PartitionHealthJson[] = (await queue.health()).map(healthToJson);
  const ready = partitions.every((partition) => partition.mode === 'serving');
  return new Reply(ready ? 200 : 503, { ready, partitions });
}
