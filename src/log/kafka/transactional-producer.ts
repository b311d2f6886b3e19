/**
 * A transactional, idempotent producer for ONE partition, speaking Kafka's transaction
 * protocol through kafkajs's cluster and broker objects (kafkajs-cluster.ts).
 *
 * Why not kafkajs's Producer: per transaction it sends FindCoordinator, AddPartitionsToTxn,
 * Produce, FindCoordinator and EndTxn, one after the other, and every command in the batch
 * waits for all five. This producer looks the coordinator up once (again only after it
 * moved) and lets a transaction begin (AddPartitionsToTxn) before its records exist, so
 * the lane (transactional-lane.ts) can begin its next transaction as soon as the previous
 * one has ended and a batch waits for Produce and EndTxn only.
 *
 * The protocol, as Kafka's Java producer runs it:
 *   connect   InitProducerId(transactionalId, timeout) at the id's coordinator: a producer
 *             id and epoch. The coordinator aborts the id's open transaction and from now on
 *             refuses older epochs: this is what fences an earlier writer.
 *   begin     AddPartitionsToTxn(topic, partition).
 *   produce   Produce (acks=-1) to the partition's leader, carrying producer id, epoch and
 *             the partition's next sequence number (the broker drops a resent duplicate).
 *   offsets   (sendOffsets, when an append commits what it consumed) AddOffsetsToTxn(group) at
 *             the transaction coordinator, then TxnOffsetCommit at the group's coordinator:
 *             the group's offsets become committed with the transaction, or never.
 *   commit    EndTxn(commit); abort: EndTxn(abort).
 * A request is retried while the answer says "soon" (the coordinator is loading, or still
 * writing the markers of the id's previous transaction: CONCURRENT_TRANSACTIONS), or names
 * a moved coordinator or leader (looked up again first). Anything else is thrown as kafkajs
 * reported it; errors.ts maps it (fencing errors to Fenced).
 */
import type { Kafka } from 'kafkajs';
import {
  createCluster,
  GROUP_COORDINATOR,
  TRANSACTION_COORDINATOR,
  type Cluster,
  type ClusterBroker,
  type TransactionRef,
} from './kafkajs-cluster.ts';
import type { ConsumedOffset } from '../event-log.ts';
import { RunlogError } from '../../errors.ts';
import { retry } from '../../retry.ts';
import { isStaleLeaderError } from './errors.ts';

export interface TransactionalProducerOptions {
  kafka: Kafka;
  transactionalId: string;
  topic: string;
  partition: number;
  transactionTimeoutMs: number;
}

export interface ProducedMessage {
  key: string;
  value: Buffer | null;
}

/** How long a request keeps being retried (src/retry.ts, pauses doubling from 1 ms) while Kafka answers "soon" or names a move. */
const RETRY_FOR_MS = 10_000;
const PRODUCE_TIMEOUT_MS = 30_000;
const COORDINATOR_MOVED = new Set(['NOT_COORDINATOR_FOR_GROUP', 'GROUP_COORDINATOR_NOT_AVAILABLE']);
const TRY_AGAIN_SOON = new Set(['GROUP_LOAD_IN_PROGRESS', 'CONCURRENT_TRANSACTIONS']);
const SEQUENCE_WRAP = 2 ** 31;
/** Longest pause between tries: "soon" clears within milliseconds (commit markers being written); a move takes longer. */
const SOON_MS = 4;
const LATER_MS = 100;

export class TransactionalProducer {
  readonly #options: TransactionalProducerOptions;
  readonly #cluster: Cluster;
  #coordinator: Promise<ClusterBroker> | null = null;
  #ref: TransactionRef | null = null;
  #sequence = 0;
  #disconnected = false;

  private constructor(options: TransactionalProducerOptions) {
    this.#options = options;
    this.#cluster = createCluster(options.kafka);
  }

  /** Connects and sends InitProducerId, fencing every earlier producer of the transactionalId. */
  static async connect(options: TransactionalProducerOptions): Promise<TransactionalProducer> {
    const producer = new TransactionalProducer(options);
    try {
      await producer.#cluster.connect();
      await producer.#cluster.addTargetTopic(options.topic);
      await producer.#initProducerId();
      return producer;
    } catch (error) {
      await producer.disconnect();
      throw error;
    }
  }

  /**
   * For good: kafkajs would reconnect a disconnected cluster on its next request (a retry
   * still pending, a transaction begun ahead), leaving a connection nobody closes, so every
   * request after this is refused instead.
   */
  async disconnect(): Promise<void> {
    this.#disconnected = true;
    await this.#cluster.disconnect().catch(() => undefined);
  }

  /** AddPartitionsToTxn: the transaction is open once this resolves. */
  async begin(): Promise<void> {
    const topics = [{ topic: this.#options.topic, partitions: [this.#options.partition] }];
    await this.#atCoordinator((coordinator) => coordinator.addPartitionsToTxn({ ...this.#session(), topics }));
  }

  /** One Produce of `messages` in the open transaction; resolves the offset of the first. */
  async produce(messages: readonly ProducedMessage[]): Promise<bigint> {
    const { topic, partition } = this.#options;
    const firstSequence = this.#sequence;
    const topicData = [{ topic, partitions: [{ partition, firstSequence, messages: [...messages] }] }];
    const response = await this.#atLeader((leader) =>
      leader.produce({ ...this.#session(), acks: -1, timeout: PRODUCE_TIMEOUT_MS, topicData }),
    );
    this.#sequence = (firstSequence + messages.length) % SEQUENCE_WRAP;
    const baseOffset = response.topics.find((t) => t.topicName === topic)?.partitions.find((p) => p.partition === partition)?.baseOffset;
    if (baseOffset === undefined) throw new Error(`the produce response names no offset for partition ${partition} of ${topic}`);
    return BigInt(baseOffset);
  }

  /** Commits consumed offsets in the open transaction (see the top). */
  async sendOffsets(consumed: readonly ConsumedOffset[]): Promise<void> {
    for (const { group, topic, partition, offset } of consumed) {
      await this.#atCoordinator((coordinator) => coordinator.addOffsetsToTxn({ ...this.#session(), groupId: group }));
      const topics = [{ topic, partitions: [{ partition, offset: offset.toString(), metadata: null }] }];
      await this.#atGroupCoordinator(group, (coordinator) => coordinator.txnOffsetCommit({ ...this.#session(), groupId: group, topics }));
    }
  }

  async commit(): Promise<void> {
    await this.#atCoordinator((coordinator) => coordinator.endTxn({ ...this.#session(), transactionResult: true }));
  }

  async abort(): Promise<void> {
    await this.#atCoordinator((coordinator) => coordinator.endTxn({ ...this.#session(), transactionResult: false }));
  }

  async #initProducerId(): Promise<void> {
    const { transactionalId, transactionTimeoutMs } = this.#options;
    const result = await this.#atCoordinator((coordinator) =>
      coordinator.initProducerId({ transactionalId, transactionTimeout: transactionTimeoutMs }),
    );
    this.#ref = { transactionalId, producerId: result.producerId, producerEpoch: result.producerEpoch };
    this.#sequence = 0;
  }

  #refuseIfDisconnected(): void {
    if (this.#disconnected) throw new RunlogError('LogUnavailable', `the producer of ${this.#options.transactionalId} is disconnected`);
  }

  #session(): TransactionRef {
    if (this.#ref === null) throw new Error('the producer has no producer id');
    return this.#ref;
  }

  /** Sends a request to the transaction coordinator, retried as the top says. */
  #atCoordinator<T>(request: (coordinator: ClusterBroker) => Promise<T>): Promise<T> {
    const attempt = async (): Promise<T> => {
      this.#refuseIfDisconnected();
      const coordinator = (this.#coordinator ??= this.#cluster.findGroupCoordinator({
        groupId: this.#options.transactionalId,
        coordinatorType: TRANSACTION_COORDINATOR,
      }));
      coordinator.catch(() => {
        if (this.#coordinator === coordinator) this.#coordinator = null; // not found: look again next time
      });
      try {
        return await request(await coordinator);
      } catch (error) {
        if (coordinatorMoved(error)) await this.#lookUpAgain(coordinator);
        throw error;
      }
    };
    const retriable = (error: unknown): boolean => isType(error, TRY_AGAIN_SOON) || coordinatorMoved(error);
    const maxMs = (error: unknown): number => (isType(error, TRY_AGAIN_SOON) ? SOON_MS : LATER_MS);
    return retry(attempt, { firstMs: 1, maxMs, forMs: RETRY_FOR_MS, retriable });
  }

  /** Sends a request to the coordinator of consumer group `groupId`, looked up each time (offsets are committed rarely next to produces), retried as the top says. */
  #atGroupCoordinator<T>(groupId: string, request: (coordinator: ClusterBroker) => Promise<T>): Promise<T> {
    const attempt = async (): Promise<T> => {
      this.#refuseIfDisconnected();
      try {
        return await request(await this.#cluster.findGroupCoordinator({ groupId, coordinatorType: GROUP_COORDINATOR }));
      } catch (error) {
        if (coordinatorMoved(error)) await this.#cluster.refreshMetadata().catch(() => undefined);
        throw error;
      }
    };
    const retriable = (error: unknown): boolean => isType(error, TRY_AGAIN_SOON) || coordinatorMoved(error);
    return retry(attempt, { firstMs: 1, maxMs: LATER_MS, forMs: RETRY_FOR_MS, retriable });
  }

  /** The coordinator asked has moved (or its connection failed): forget it and refresh the metadata. */
  async #lookUpAgain(asked: Promise<ClusterBroker>): Promise<void> {
    if (this.#coordinator === asked) this.#coordinator = null;
    await this.#cluster.refreshMetadata().catch(() => undefined);
  }

  /** Sends a request to the partition's leader; a moved leader is looked up again and asked again. */
  #atLeader<T>(request: (leader: ClusterBroker) => Promise<T>): Promise<T> {
    const { topic, partition } = this.#options;
    const attempt = async (): Promise<T> => {
      this.#refuseIfDisconnected();
      try {
        const nodeId = Object.keys(this.#cluster.findLeaderForPartitions(topic, [partition]))[0];
        if (nodeId === undefined) throw new NoLeaderKnown(`no leader is known for partition ${partition} of ${topic}`);
        return await request(await this.#cluster.findBroker({ nodeId }));
      } catch (error) {
        if (leaderMoved(error)) await this.#cluster.refreshMetadata().catch(() => undefined);
        throw error;
      }
    };
    return retry(attempt, { firstMs: 1, maxMs: LATER_MS, forMs: RETRY_FOR_MS, retriable: leaderMoved });
  }
}

class NoLeaderKnown extends Error {}

function coordinatorMoved(error: unknown): boolean {
  return isType(error, COORDINATOR_MOVED) || isConnectionError(error);
}

function leaderMoved(error: unknown): boolean {
  return error instanceof NoLeaderKnown || isStaleLeaderError(error);
}

function isType(error: unknown, types: ReadonlySet<string>): boolean {
  const type = (error as { type?: unknown } | null)?.type;
  return typeof type === 'string' && types.has(type);
}

function isConnectionError(error: unknown): boolean {
  const name = (error as { name?: unknown } | null)?.name;
  return name === 'KafkaJSConnectionError' || name === 'KafkaJSConnectionClosedError' || name === 'KafkaJSRequestTimeoutError';
}
