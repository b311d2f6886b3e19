/** What a cluster node works with and answers (src/cluster sits below the wire and the server: these are its own shapes). */
import type { RunQueue } from '../queue/run-queue.ts';

/** A node's address in the group: its stable id and the base URL it advertises. */
export interface NodeAddress {
  node: string;
  url: string;
}

/** Who serves which partition, as this node knows it (GET /v1/cluster answers it as is). */
export interface ClusterMap {
  group: string | null;
  /** The group generation the map is of; 0 before the node has joined. */
  generation: number;
  partitions: number;
  self: NodeAddress;
  members: NodeAddress[];
  /** Per partition, its owner's base URL; null while unassigned or unknown. */
  owners: (string | null)[];
}

export type ClusterLogLevel = 'debug' | 'info' | 'warn' | 'error';

/** Where the node reports what it does (the server's JSON logger has this shape). */
export interface ClusterLogger {
  log(level: ClusterLogLevel, event: string, fields?: Record<string, unknown>): void;
}

/**
 * Work that runs beside a partition while it serves on this node (the command intake of the
 * commands topic): started once the partition serves, stopped before it is released.
 */
export interface PartitionWork {
  start(partition: number): void;
  /** Stops the partition's work, settling what is under way; resolves once it has stopped. */
  stop(partition: number): Promise<void>;
  /** The node has stopped (every partition's work stopped and released): let go of what the work holds. */
  close?(): Promise<void>;
}

/** The queue as a node drives it: a RunQueue opened with ownership 'assigned'. */
export type AssignableQueue = Pick<RunQueue, 'acquire' | 'release' | 'health' | 'partitions' | 'setOwnerDirectory' | 'setGuard'>;
