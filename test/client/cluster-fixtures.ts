/**
 * A cluster of runlog nodes in this process, for the cluster client's tests: each node a real
 * HTTP server (startServer, a free loopback port) over its own RunQueue with ownership
 * 'assigned', all on ONE Kafka topic of the real broker. Which node owns which partition is
 * set here by hand (acquire / release: real claims, real fencing), and the map each server
 * answers on GET /v1/cluster and names in its NotOwner refusals is this assignment: it stands
 * for the consumer group (src/log/kafka/group-membership.ts), which these tests do not need.
 * Without a broker at hand (the argument tables), the nodes share one memory log instead: no
 * fencing there, so only the disjoint assignment keeps them apart.
 */
import type { TestContext } from 'node:test';
import type { EventLog } from '../../src/log/event-log.ts';
import { openMemoryLog } from '../../src/log/memory/memory-log.ts';
import { openKafkaLog } from '../../src/log/kafka/kafka-log.ts';
import { partitionOf } from '../../src/log/partitioner.ts';
import { openRunQueueOnLog } from '../../src/queue/open-run-queue.ts';
import type { RunQueue } from '../../src/queue/run-queue.ts';
import { openAuthenticator } from '../../src/server/auth.ts';
import { startServer, type RunningServer } from '../../src/server/start-server.ts';
import type { Logger } from '../../src/server/types.ts';
import type { ClusterAnswer } from '../../src/wire/index.ts';
import { kafkaBrokers, openTestKafkaLog, uniqueTopic } from '../log/kafka-test-support.ts';
import { onCleanup } from '../support/cleanup.ts';

export interface TestNode {
  name: string;
  queue: RunQueue;
  server: RunningServer;
  url: string;
  /** HTTP statuses this node answered, in order (from its request log). */
  statuses: number[];
}

export interface ClusterOptions {
  nodes: number;
  partitions: number;
  /** Kafka (default): one topic of the real broker; memory: one memory log the nodes share. */
  log?: 'kafka' | 'memory';
}

export class TestCluster {
  readonly nodes: TestNode[] = [];
  /** Per partition, the owner's url; null while it moves. */
  readonly owners: (string | null)[];
  generation = 1;

  private constructor(
    private readonly t: TestContext,
    readonly partitions: number,
    /** Opens a node's log. */
    private readonly openLog: () => Promise<EventLog>,
  ) {
    this.owners = Array.from({ length: partitions }, () => null);
  }

  /** `nodes` nodes; partition p is node (p mod nodes)'s. */
  static async start(t: TestContext, { nodes, partitions, log = 'kafka' }: ClusterOptions): Promise<TestCluster> {
    let openLog: () => Promise<EventLog>;
    if (log === 'kafka') {
      const topic = uniqueTopic('runlog-cluster-client');
      await openTestKafkaLog(t, partitions, { topic }); // creates the topic, deletes it at the end
      openLog = () => openKafkaLog({ brokers: kafkaBrokers(), topic, partitions });
    } else {
      const shared = await openMemoryLog({ partitions });
      openLog = async () => shared;
    }
    const cluster = new TestCluster(t, partitions, openLog);
    for (let i = 0; i < nodes; i++) await cluster.addNode();
    await Promise.all(Array.from({ length: partitions }, (_, p) => cluster.assign(p, cluster.nodes[p % nodes]!)));
    return cluster;
  }

  /** Starts one more node (a member owning nothing yet). */
  async addNode(): Promise<TestNode> {
    const log = await this.openLog();
    const queue = await openRunQueueOnLog(log, { ownership: 'assigned' });
    const statuses: number[] = [];
    const logger: Logger = {
      log: (_level, event, fields) => {
        if (event === 'http.request') statuses.push((fields as { status: number }).status);
      },
    };
    const node = { name: `node${this.nodes.length}`, queue, statuses } as TestNode;
    const server = await startServer({
      queue,
      log,
      authenticator: openAuthenticator(),
      logger,
      host: '127.0.0.1',
      port: 0,
      maxInputBytes: queue.maxInputBytes,
      cluster: { describe: () => this.answer(node) },
    });
    Object.assign(node, { server, url: server.url });
    queue.setOwnerDirectory((p) => this.owners[p] ?? null);
    this.nodes.push(node);
    onCleanup(this.t, async () => {
      await server.close();
      await queue.stop();
    });
    return node;
  }

  /** Node `node` takes `partition` (no one had it). */
  async assign(partition: number, node: TestNode): Promise<void> {
    await node.queue.acquire(partition);
    this.owners[partition] = node.url;
    this.generation++;
  }

  /**
   * Moves `partition` to `to`, as a rebalance would: released by its owner, claimed by `to`.
   * announced: the map names `to` before the release (a NotOwner then names it); otherwise
   * it names no owner until `to` serves (a NotOwner names none: the client waits and asks again).
   */
  async move(partition: number, to: TestNode, { announced, gapMs = 0 }: { announced: boolean; gapMs?: number }): Promise<void> {
    const from = this.ownerOf(partition);
    this.owners[partition] = announced ? to.url : null;
    this.generation++;
    await from.queue.release(partition);
    await new Promise((resolve) => setTimeout(resolve, gapMs));
    await this.assign(partition, to);
  }

  /** Takes `node` out of the group: it must own nothing; its server closes. */
  async removeNode(node: TestNode): Promise<void> {
    if (node.queue.owned().length > 0) throw new Error(`${node.name} still owns ${node.queue.owned().join(', ')}`);
    this.nodes.splice(this.nodes.indexOf(node), 1);
    this.generation++;
    await node.server.close();
    await node.queue.stop();
  }

  ownerOf(partition: number): TestNode {
    const node = this.nodes.find((n) => n.url === this.owners[partition]);
    if (node === undefined) throw new Error(`partition ${partition} has no owner now`);
    return node;
  }

  /** What GET /v1/cluster answers on `self`. */
  answer(self: TestNode): ClusterAnswer {
    const members = this.nodes.map((n) => ({ node: n.name, url: n.url }));
    return {
      group: 'test-group',
      generation: this.generation,
      partitions: this.partitions,
      self: { node: self.name, url: self.url },
      members,
      owners: [...this.owners],
    };
  }
}

/** A thread of `tenant` whose partition is `partition`, distinct per `prefix`. */
export function threadOn(partition: number, partitions: number, prefix = 't', tenant = 'acme'): string {
  for (let i = 0; ; i++) if (partitionOf(tenant, `${prefix}${i}`, partitions) === partition) return `${prefix}${i}`;
}
