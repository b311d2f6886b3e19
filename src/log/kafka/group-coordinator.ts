/**
 * The classic consumer-group requests (JoinGroup, SyncGroup, Heartbeat, LeaveGroup) on
 * kafkajs's Cluster and Broker, typed here in one place like the transaction requests of
 * kafkajs-cluster.ts, and checked when the cluster is made.
 *
 * group-membership.ts drives the group protocol on them itself rather than through a kafkajs
 * Consumer, because the Consumer cannot carry what runlog's membership needs:
 *   - it decodes each member's SyncGroup answer and drops its userData, so only the leader
 *     would know the whole owners map (and the leader's assigner is not told the generation);
 *   - it heartbeats only from its fetch loop, so it must fetch (all partitions paused, a
 *     request every maxWaitTime) to stay in the group, and proof of membership comes late;
 *   - on a crash it disconnects, leaves the group and rejoins as a new member.
 * Driving the four requests directly, the membership never fetches, knows each generation,
 * and dates each proof of membership by when its request was sent (see alive()).
 */
import type { Kafka } from 'kafkajs';
import { RunlogError } from '../../errors.ts';
import { createCluster } from './kafkajs-cluster.ts';

export interface JoinGroupResponse {
  generationId: number;
  groupProtocol: string;
  leaderId: string;
  memberId: string;
  /** Only the leader gets the members (with their metadata); the others get []. */
  members: Array<{ memberId: string; memberMetadata: Buffer }>;
}

/** A kafkajs Broker acting as the group's coordinator. */
export interface GroupCoordinator {
  joinGroup(request: {
    groupId: string;
    sessionTimeout: number;
    rebalanceTimeout: number;
    memberId: string;
    protocolType: 'consumer';
    groupProtocols: Array<{ name: string; metadata: Buffer }>;
  }): Promise<JoinGroupResponse>;
  syncGroup(request: {
    groupId: string;
    generationId: number;
    memberId: string;
    groupAssignment: Array<{ memberId: string; memberAssignment: Buffer }>;
  }): Promise<{ memberAssignment: Buffer }>;
  heartbeat(request: { groupId: string; groupGenerationId: number; memberId: string }): Promise<unknown>;
  leaveGroup(request: { groupId: string; memberId: string }): Promise<unknown>;
}

/** kafkajs `Cluster`, as the membership uses it. */
export interface GroupCluster {
  connect(): Promise<void>;
  disconnect(): Promise<void>;
  addTargetTopic(topic: string): Promise<void>;
  findTopicPartitionMetadata(topic: string): Array<{ partitionId: number }>;
  findGroupCoordinator(request: { groupId: string }): Promise<GroupCoordinator>;
}

const COORDINATOR_METHODS = ['joinGroup', 'syncGroup', 'heartbeat', 'leaveGroup'];

/** A new, unconnected cluster of the client's brokers; its coordinators are checked for the group requests when found. */
export function createGroupCluster(kafka: Kafka): GroupCluster {
  const cluster = createCluster(kafka) as unknown as GroupCluster;
  if (typeof cluster.findTopicPartitionMetadata !== 'function') throw unsupported('its cluster lacks findTopicPartitionMetadata');
  const find = cluster.findGroupCoordinator.bind(cluster);
  cluster.findGroupCoordinator = async (request) => {
    const broker = (await find(request)) as unknown as Record<string, unknown>;
    const missing = COORDINATOR_METHODS.filter((method) => typeof broker[method] !== 'function');
    if (missing.length > 0) throw unsupported(`its broker lacks ${missing.join(', ')}`);
    return broker as unknown as GroupCoordinator;
  };
  return cluster;
}

function unsupported(what: string): RunlogError {
  return new RunlogError(
    'LogUnavailable',
    `runlog's group membership needs kafkajs 2.2.x internals, and ${what}: install the kafkajs version in package-lock.json`,
  );
}
