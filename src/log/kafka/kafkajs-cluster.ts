/**
 * kafkajs's Cluster and Broker: the connection, metadata and protocol layer beneath its
 * Producer. transactional-producer.ts drives the transaction protocol on them directly
 * (see there for why). They are not kafkajs's public API, so everything runlog uses of them
 * is typed here, in one place, and checked when a cluster is made: a kafkajs without them
 * fails with a clear error instead of misbehaving. package-lock.json pins kafkajs 2.2.4.
 *
 * A cluster is made through the Kafka client's own factory, so it has the client's
 * brokers, clientId, ssl, sasl, timeouts and logger.
 */
import type { Kafka } from 'kafkajs';
import { RunlogError } from '../../errors.ts';

/** The requests of a transactional producer, on one broker connection (kafkajs `Broker`). */
export interface ClusterBroker {
  initProducerId(request: {
    transactionalId: string;
    transactionTimeout: number;
  }): Promise<{ producerId: number | string; producerEpoch: number }>;
  addPartitionsToTxn(request: TransactionRef & { topics: Array<{ topic: string; partitions: number[] }> }): Promise<unknown>;
  produce(request: TransactionRef & { acks: -1; timeout: number; topicData: ProduceTopicData[] }): Promise<ProduceResponse>;
  endTxn(request: TransactionRef & { transactionResult: boolean }): Promise<unknown>;
  /** At the transaction coordinator: the group's offsets partition joins the transaction. */
  addOffsetsToTxn(request: TransactionRef & { groupId: string }): Promise<unknown>;
  /** At the group's coordinator: offsets committed when (and only if) the transaction commits. */
  txnOffsetCommit(
    request: TransactionRef & {
      groupId: string;
      topics: Array<{ topic: string; partitions: Array<{ partition: number; offset: string; metadata: string | null }> }>;
    },
  ): Promise<unknown>;
}

/** A Fetch request of one partition at an offset (kafkajs `Broker.fetch`; isolationLevel 1: read_committed). */
export interface FetchRequest {
  replicaId: -1;
  isolationLevel: 1;
  maxWaitTime: number;
  minBytes: number;
  maxBytes: number;
  topics: Array<{ topic: string; partitions: Array<{ partition: number; fetchOffset: string; maxBytes: number }> }>;
}

/** A fetched record as kafkajs decodes it (offsets as decimal strings). */
export interface FetchedRecord {
  offset: string;
  key: Buffer | null;
  value: Buffer | null;
  isControlRecord: boolean;
}

export interface FetchResponse {
  responses: Array<{ topicName: string; partitions: Array<{ partition: number; lastStableOffset: string; messages: FetchedRecord[] }> }>;
}

/** The fetching side of a broker connection (kafkajs `Broker`). */
export interface FetchBroker {
  fetch(request: FetchRequest): Promise<FetchResponse>;
}

export interface TransactionRef {
  transactionalId: string;
  producerId: number | string;
  producerEpoch: number;
}

export interface ProduceTopicData {
  topic: string;
  partitions: Array<{ partition: number; firstSequence: number; messages: Array<{ key: string; value: Buffer | null }> }>;
}

export interface ProduceResponse {
  topics: Array<{ topicName: string; partitions: Array<{ partition: number; errorCode: number; baseOffset: string }> }>;
}

/** kafkajs `Cluster`: connections and metadata. */
export interface Cluster {
  connect(): Promise<void>;
  disconnect(): Promise<void>;
  addTargetTopic(topic: string): Promise<void>;
  refreshMetadata(): Promise<void>;
  /** Leader node id => the partitions it leads, of those asked. */
  findLeaderForPartitions(topic: string, partitions: number[]): Record<string, number[]>;
  findBroker(node: { nodeId: string }): Promise<ClusterBroker & FetchBroker>;
  findGroupCoordinator(request: { groupId: string; coordinatorType: number }): Promise<ClusterBroker>;
}

/** kafkajs's coordinator type for transactional ids (FindCoordinator key_type 1). */
export const TRANSACTION_COORDINATOR = 1;
/** ... and for consumer groups (key_type 0). */
export const GROUP_COORDINATOR = 0;

const CREATE_CLUSTER = 'private:Kafka:createCluster';
const CLUSTER_METHODS = [
  'connect',
  'disconnect',
  'addTargetTopic',
  'refreshMetadata',
  'findLeaderForPartitions',
  'findBroker',
  'findGroupCoordinator',
];

type ClusterFactory = (options: { allowAutoTopicCreation: boolean; maxInFlightRequests: number }) => unknown;

/** A new, unconnected cluster of the client's brokers, one request in flight per connection. */
export function createCluster(kafka: Kafka): Cluster {
  const symbol = Object.getOwnPropertySymbols(kafka).find((s) => s.description === CREATE_CLUSTER);
  const factory = symbol === undefined ? undefined : (kafka as unknown as Record<symbol, unknown>)[symbol];
  if (typeof factory !== 'function') throw unsupported('the Kafka client has no cluster factory');
  const cluster = (factory as ClusterFactory)({ allowAutoTopicCreation: false, maxInFlightRequests: 1 }) as Record<string, unknown>;
  const missing = CLUSTER_METHODS.filter((method) => typeof cluster[method] !== 'function');
  if (missing.length > 0) throw unsupported(`its cluster lacks ${missing.join(', ')}`);
  return cluster as unknown as Cluster;
}

function unsupported(what: string): RunlogError {
  return new RunlogError(
    'LogUnavailable',
    `runlog's Kafka writer needs kafkajs 2.2.x internals, and ${what}: install the kafkajs version in package-lock.json`,
  );
}
