/**
 * Unauthenticated probes: the process serves HTTP (/healthz); every partition serves, or on a
 * cluster node every partition assigned to it (/readyz); Prometheus scrapes (/metrics).
 */
import type { ServerResponse } from 'node:http';
import { healthToJson, type PartitionHealthJson } from '../../wire/index.ts';
import { PROMETHEUS_CONTENT_TYPE } from '../prometheus.ts';
import { Reply, type RouteRequest } from '../route.ts';

export async function healthz(): Promise<{ status: 'ok' }> {
  return { status: 'ok' };
}

export async function readyz({ queue, cluster }: RouteRequest): Promise<Reply> {
  const partitions: PartitionHealthJson[] = (await queue.health()).map(healthToJson);
  const ready = cluster.ready === undefined ? partitions.every((partition) => partition.mode === 'serving') : await cluster.ready();
  return new Reply(ready ? 200 : 503, { ready, partitions });
}

/** Prometheus text format 0.0.4, read from the queue at this scrape (prometheus.ts). */
export async function prometheusText({ prometheus }: RouteRequest, response: ServerResponse): Promise<void> {
  const text = await prometheus.scrape();
  response.writeHead(200, { 'content-type': PROMETHEUS_CONTENT_TYPE, 'cache-control': 'no-store' });
  response.end(text);
}
