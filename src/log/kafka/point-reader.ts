/**
 * Reads the one record at an offset of a partition, read_committed, with a Fetch request to
 * the partition's leader: what the queue reads back a closed entry with (src/queue/closed-entries.ts),
 * three records by offset. A read through partition-reader.ts starts a consumer in a group of
 * its own (kafkajs has no assign), ~0.5-0.7 s on the local broker before its first fetch; a
 * point read is one round trip on a connection kept for the log.
 *
 * Only offsets of records the log answered as appended are asked for (the ticket index keeps
 * no other): committed, below the stable end. The raw Fetch does not drop aborted records as a
 * consumer does, so the caller checks the record's key (closed-entries.ts): an offset the
 * view took from a committed record never holds an aborted one. The fetch answers the batch holding the offset;
 * the record at exactly that offset is taken, never a control record. A leader that moved is
 * found again (metadata refreshed) a few times before the read fails LogUnavailable.
 */
import type { Kafka } from 'kafkajs';
import { RunlogError } from '../../errors.ts';
import type { LogRecord } from '../event-log.ts';
import { toRunlogError } from './errors.ts';
import { createCluster, type Cluster, type FetchBroker } from './kafkajs-cluster.ts';

const TRIES = 4;
/** How long close waits for the fetches in flight. */
const CLOSE_WAIT_MS = 5_000;

export class PointReader {
  readonly #kafka: Kafka;
  readonly #topic: string;
  readonly #maxBytes: number;
  #cluster: Promise<Cluster> | null = null;
  #closed = false;
  readonly #brokers = new Map<string, Promise<FetchBroker>>();
  /** Per node: the last fetch sent to it, settled or not (see #inLane). */
  readonly #lanes = new Map<string, Promise<unknown>>();

  /** `maxBytes`: what one fetch may answer (a whole record batch of the topic at least). */
  constructor(kafka: Kafka, topic: string, maxBytes: number) {
    this.#kafka = kafka;
    this.#topic = topic;
    this.#maxBytes = maxBytes;
  }

  /** The record at `offset` of `partition`, or null when the partition holds none there (compacted away). */
  async read(partition: number, offset: bigint): Promise<LogRecord | null> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.#fetch(partition, offset, attempt > 1);
      } catch (error) {
        if (this.#closed || attempt >= TRIES)
          throw toRunlogError(error, `reading offset ${offset} of partition ${partition} of ${this.#topic}`);
      }
    }
  }

  async #fetch(partition: number, offset: bigint, refresh: boolean): Promise<LogRecord | null> {
    const cluster = await this.#connected();
    if (refresh) await cluster.refreshMetadata();
    const leaders = cluster.findLeaderForPartitions(this.#topic, [partition]);
    const nodeId = Object.keys(leaders)[0];
    if (nodeId === undefined) throw new RunlogError('LogUnavailable', `no leader for partition ${partition} of ${this.#topic}`);
    const broker = await this.#broker(cluster, nodeId, refresh);
    const wanted = String(offset);
    const response = await this.#inLane(nodeId, () =>
      broker.fetch({
        replicaId: -1,
        isolationLevel: 1,
        maxWaitTime: 0,
        minBytes: 0,
        maxBytes: this.#maxBytes,
        topics: [{ topic: this.#topic, partitions: [{ partition, fetchOffset: wanted, maxBytes: this.#maxBytes }] }],
      }),
    );
    const fetched = response.responses.flatMap((r) => r.partitions).find((p) => p.partition === partition);
    const record = fetched?.messages.find((m) => m.offset === wanted && !m.isControlRecord);
    if (record === undefined) return null;
    return { offset, key: record.key === null ? '' : record.key.toString('utf8'), value: record.value };
  }

  /**
   * The connection to node `nodeId`, one per node for all reads: kafkajs's findBroker, asked by
   * several reads at once (a read-back asks for three records together) before its first
   * connection is up, connects once for each, and keeps (and closes) only one of them.
   */
  #broker(cluster: Cluster, nodeId: string, refresh: boolean): Promise<FetchBroker> {
    let broker = refresh ? undefined : this.#brokers.get(nodeId);
    if (broker === undefined) {
      broker = cluster.findBroker({ nodeId });
      this.#brokers.set(nodeId, broker);
      broker.catch(() => this.#brokers.delete(nodeId));
    }
    return broker;
  }

  /**
   * Runs `fetch` once the node's previous fetch has settled. kafkajs sends a Fetch on a
   * connection of its own, connected on first use (and again after the broker dropped it); each
   * request that finds it unconnected connects it anew and only the last socket is kept, so
   * concurrent first fetches (a read-back reads three records at once) left sockets open that
   * no disconnect closes, and the process never exited. The connection carries one request at a
   * time anyway (maxInFlightRequests 1): a lane costs nothing.
   */
  #inLane<T>(nodeId: string, fetch: () => Promise<T>): Promise<T> {
    const previous = this.#lanes.get(nodeId) ?? Promise.resolve();
    // A fetch queued behind a close is never sent: kafkajs would connect its connection again, and nothing would close it.
    const unlessClosed = (): Promise<T> => (this.#closed ? Promise.reject(this.#stopped()) : fetch());
    const next = previous.then(unlessClosed, unlessClosed);
    this.#lanes.set(
      nodeId,
      next.catch(() => undefined),
    );
    return next;
  }

  #connected(): Promise<Cluster> {
    // Nothing connects after close: a connection made then would keep the process alive.
    if (this.#closed) return Promise.reject(this.#stopped());
    this.#cluster ??= (async () => {
      const cluster = createCluster(this.#kafka);
      await cluster.connect();
      await cluster.addTargetTopic(this.#topic);
      return cluster;
    })();
    // A failed connect is not kept: the next read connects again.
    this.#cluster.catch(() => (this.#cluster = null));
    return this.#cluster;
  }

  #stopped(): RunlogError {
    return new RunlogError('Stopped', `the Kafka log of topic ${this.#topic} is closed`);
  }

  /**
   * Closes the connections once the fetches in flight have settled (a fetch still connecting
   * would otherwise connect after the disconnect, and keep the process alive), waiting
   * CLOSE_WAIT_MS at most (a broker that does not answer); those queued behind them fail Stopped.
   */
  async close(): Promise<void> {
    this.#closed = true;
    let timer: NodeJS.Timeout | undefined;
    const waited = new Promise<void>((resolve) => (timer = setTimeout(resolve, CLOSE_WAIT_MS).unref()));
    await Promise.race([Promise.all(this.#lanes.values()), waited]);
    clearTimeout(timer);
    this.#brokers.clear();
    this.#lanes.clear();
    const cluster = this.#cluster;
    this.#cluster = null;
    if (cluster !== null) await (await cluster.catch(() => null))?.disconnect().catch(() => undefined);
  }
}
