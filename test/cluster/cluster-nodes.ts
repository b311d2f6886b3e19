/**
 * Helpers of the cluster tests: `runlog serve --group` child processes on one Kafka topic
 * (test/server/serve-child.ts spawns them), their maps (GET /v1/cluster), and a submitter
 * that reaches each partition's owner through plain HTTP, following NotOwner and the map,
 * and records every submission a node acknowledged.
 */
import type { TestContext } from 'node:test';
import { partitionOf } from '../../src/log/partitioner.ts';
import { kafkaBrokers } from '../log/kafka-test-support.ts';
import { spawnServe, type ServeChild } from '../server/serve-child.ts';

export const PARTITIONS = 6;
/** The broker's smallest session timeout allowed by default (group.min.session.timeout.ms). */
export const SESSION_TIMEOUT_MS = 6_000;
export const TENANT = 'acme';

export interface ClusterMapJson {
  group: string | null;
  generation: number;
  partitions: number;
  self: { node: string; url: string };
  members: { node: string; url: string }[];
  owners: (string | null)[];
}

export interface Node {
  readonly serve: ServeChild;
  readonly url: string;
}

export async function startNode(t: TestContext, topic: string, group: string): Promise<Node> {
  const args = ['--brokers', kafkaBrokers().join(','), '--topic', topic, '--partitions', String(PARTITIONS), '--group', group];
  const serve = spawnServe(t, [...args, '--host', '127.0.0.1', '--port', '0', '--session-timeout', String(SESSION_TIMEOUT_MS)]);
  const { url } = await serve.started();
  return { serve, url };
}

export async function clusterOf(url: string, signal?: AbortSignal): Promise<ClusterMapJson> {
  const response = await fetch(`${url}/v1/cluster`, signal === undefined ? {} : { signal });
  if (response.status !== 200) throw new Error(`GET ${url}/v1/cluster answered ${response.status}`);
  return (await response.json()) as ClusterMapJson;
}

export async function readyz(url: string): Promise<number> {
  return (await fetch(`${url}/readyz`)).status;
}

/** Polls `check` every 100 ms until it answers something other than undefined; throws naming `what` after `timeoutMs`. */
export async function waitFor<T>(what: string, check: () => Promise<T | undefined>, timeoutMs = 90_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const found = await check();
      if (found !== undefined) return found;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last === undefined ? '' : `: ${String(last)}`}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Every node's map, once all agree on one generation of exactly these nodes, each partition owned by one of them, and every node is ready. */
export async function stableCluster(nodes: readonly Node[]): Promise<ClusterMapJson> {
  const urls = nodes.map((node) => node.url).sort();
  return waitFor(`a stable cluster of ${urls.join(', ')}`, async () => {
    const maps = await Promise.all(nodes.map((node) => clusterOf(node.url)));
    const first = maps[0]!;
    const agreed = maps.every((map) => map.generation === first.generation && JSON.stringify(map.owners) === JSON.stringify(first.owners));
    const members = first.members.map((member) => member.url).sort();
    if (!agreed || JSON.stringify(members) !== JSON.stringify(urls)) return undefined;
    if (!first.owners.every((owner) => owner !== null && urls.includes(owner))) return undefined;
    const ready = await Promise.all(nodes.map((node) => readyz(node.url)));
    return ready.every((status) => status === 200) ? first : undefined;
  });
}

/** How many partitions each url owns in `map`. */
export function shares(map: ClusterMapJson): Map<string, number> {
  const counts = new Map<string, number>();
  for (const owner of map.owners) if (owner !== null) counts.set(owner, (counts.get(owner) ?? 0) + 1);
  return counts;
}

/** A thread of TENANT on `partition`, the n-th such. */
export function threadOn(partition: number, n = 0): string {
  for (let i = 0, found = 0; ; i++) {
    if (partitionOf(TENANT, `t${i}`, PARTITIONS) !== partition) continue;
    if (found++ === n) return `t${i}`;
  }
}

/** The serve's JSON log lines of `event`. */
export function linesOf(node: Node, event: string): Record<string, unknown>[] {
  return node.serve.records.filter((record) => record.event === event);
}

export interface Acknowledged {
  entryId: string;
  thread: string;
  partition: number;
  /** The node that answered 2xx, when the request was sent and when the answer came (epoch ms). */
  by: string;
  sentAt: number;
  at: number;
}

export interface SubmitAnswer {
  status: number;
  body: Record<string, unknown>;
}

export async function submitTo(url: string, thread: string, input: string, signal?: AbortSignal): Promise<SubmitAnswer> {
  const response = await fetch(`${url}/v1/submit`, {
    ...(signal === undefined ? {} : { signal }),
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ tenant: TENANT, thread, agent: 'billing', inputText: input }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/** How long the submitter waits for an answer (a paused node gives none) before it reads the map again. */
const ANSWER_TIMEOUT_MS = 3_000;

/**
 * Submits without pause from `workers` loops over threads of every partition, each to its
 * partition's owner by the map it last read; a NotOwner naming an owner is followed, any other
 * refusal, a connection that failed or no answer within ANSWER_TIMEOUT_MS reads the map again
 * (from any node still listed that answers) after a short pause. Records each acknowledged
 * submission.
 */
export class Submitter {
  readonly acknowledged: Acknowledged[] = [];
  readonly refusals = new Map<string, number>();
  #map: ClusterMapJson | null = null;
  #stopped = false;
  #loops: Promise<void>[] = [];
  #sent = 0;

  constructor(private readonly nodes: () => readonly Node[]) {}

  start(workers = 4): void {
    this.#loops = Array.from({ length: workers }, (_, w) => this.#loop(w));
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    await Promise.all(this.#loops);
  }

  /** The first acknowledgment for `partition` at or after `since` (epoch ms) by another node than `notBy`. */
  firstAckAfter(partition: number, since: number, notBy: string): Acknowledged | undefined {
    return this.acknowledged.find((ack) => ack.partition === partition && ack.at >= since && ack.by !== notBy);
  }

  async #loop(worker: number): Promise<void> {
    for (let i = 0; !this.#stopped; i++) {
      const partition = (worker + i) % PARTITIONS;
      const thread = threadOn(partition, i % 5);
      let owner: string | null = (await this.#currentMap())?.owners[partition] ?? null;
      if (owner === null) await this.#refused('no owner in the map');
      for (let hop = 0; owner !== null && hop < 3 && !this.#stopped; hop++) {
        const next = await this.#submit(owner, thread, partition, `${worker}-${i}-${this.#sent++}`);
        if (next === 'done') break;
        owner = next;
      }
    }
  }

  /** 'done', or where to try next (a NotOwner's owner); null: read the map again. */
  async #submit(url: string, thread: string, partition: number, input: string): Promise<'done' | string | null> {
    let answer: SubmitAnswer;
    const sentAt = Date.now();
    try {
      answer = await submitTo(url, thread, input, AbortSignal.timeout(ANSWER_TIMEOUT_MS));
    } catch (error) {
      return this.#refused(error instanceof DOMException && error.name === 'TimeoutError' ? 'no answer' : 'unreachable');
    }
    if (answer.status === 200) {
      this.acknowledged.push({ entryId: String(answer.body.entryId), thread, partition, by: url, sentAt, at: Date.now() });
      return 'done';
    }
    const code = String(answer.body.code ?? answer.status);
    if (code === 'NotOwner' && typeof answer.body.owner === 'string') {
      this.#count(code);
      return answer.body.owner;
    }
    return this.#refused(code);
  }

  async #refused(code: string): Promise<null> {
    this.#count(code);
    this.#map = null;
    await new Promise((resolve) => setTimeout(resolve, 100));
    return null;
  }

  #count(code: string): void {
    this.refusals.set(code, (this.refusals.get(code) ?? 0) + 1);
  }

  /** The map of the newest generation any node answers with (a node that lost its membership answers none: generation 0). */
  async #currentMap(): Promise<ClusterMapJson | null> {
    if (this.#map !== null) return this.#map;
    const maps = await Promise.all(this.nodes().map((node) => clusterOf(node.url, AbortSignal.timeout(1_000)).catch(() => null)));
    this.#map = maps.reduce<ClusterMapJson | null>(
      (newest, map) => (map !== null && map.generation > (newest?.generation ?? 0) ? map : newest),
      null,
    );
    if (this.#map === null) await new Promise((resolve) => setTimeout(resolve, 100));
    return this.#map;
  }
}
