/**
 * Waiting for a cluster of runlog serve nodes to settle: every node answers GET /v1/cluster
 * with the same generation, the same members (as many as the nodes running) and an owner for
 * every partition, and GET /readyz 200 (each partition it owns serves). A single node (no
 * group) is settled once ready. The soak and the bench start measuring from there, and the
 * soak's chaos loop waits for it after each restart before the next kill.
 */
import type { ClusterAnswer } from '../../src/wire/shapes.ts';
import type { ServeNode } from './nodes.ts';

const POLL_MS = 200;

export interface Settled {
  generation: number;
  /** Partitions each node owns, by node url. */
  owned: Record<string, number>;
  /** ms from the call to settled. */
  tookMs: number;
}

export async function settle(nodes: readonly ServeNode[], timeoutMs: number): Promise<Settled> {
  const started = performance.now();
  let last = '';
  for (;;) {
    const running = nodes.filter((node) => node.running);
    const answers = await Promise.all(running.map((node) => look(node.url)));
    const verdict = judge(running, answers);
    if (typeof verdict !== 'string') return { ...verdict, tookMs: Math.round(performance.now() - started) };
    last = verdict;
    if (performance.now() - started > timeoutMs) throw new Error(`the cluster did not settle within ${timeoutMs} ms: ${last}`);
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

interface Look {
  cluster: ClusterAnswer | null;
  ready: boolean;
}

async function look(url: string): Promise<Look> {
  const [cluster, ready] = await Promise.all([
    fetch(`${url}/v1/cluster`)
      .then(async (response) => (response.ok ? ((await response.json()) as ClusterAnswer) : null))
      .catch(() => null),
    fetch(`${url}/readyz`)
      .then(async (response) => {
        await response.arrayBuffer();
        return response.status === 200;
      })
      .catch(() => false),
  ]);
  return { cluster, ready };
}

/** Settled, or what is not yet. */
function judge(running: readonly ServeNode[], answers: readonly Look[]): Omit<Settled, 'tookMs'> | string {
  const urls = new Set(running.map((node) => node.url));
  const generations = new Set<number>();
  let owners: string | null = null;
  for (const [i, { cluster, ready }] of answers.entries()) {
    const name = running[i]!.name;
    if (cluster === null) return `${name} does not answer /v1/cluster`;
    if (!ready) return `${name} is not ready`;
    if (cluster.group !== null && cluster.members.length !== running.length)
      return `${name} sees ${cluster.members.length} members, ${running.length} running`;
    if (cluster.owners.some((owner) => owner === null || !urls.has(owner))) return `${name} sees owners ${JSON.stringify(cluster.owners)}`;
    generations.add(cluster.generation);
    const map = JSON.stringify(cluster.owners);
    if (owners !== null && map !== owners) return `the nodes disagree on the owners: ${owners} / ${map}`;
    owners = map;
  }
  if (generations.size !== 1 || owners === null) return `generations ${[...generations].join(', ')}`;
  const owned: Record<string, number> = {};
  for (const owner of JSON.parse(owners) as string[]) owned[owner] = (owned[owner] ?? 0) + 1;
  return { generation: [...generations][0]!, owned };
}
