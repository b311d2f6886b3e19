/**
 * Snapshots of a partition's view (schemas/snapshots/): the envelope that names what a
 * snapshot is of, and the view's state. These shapes mirror the schemas, as types.ts does
 * the events'; snapshot-codec.ts maps between the two. Absent values are null.
 */
import type { Outcome } from './types.ts';

/** The only snapshot format this runlog writes and reads. */
export const SNAPSHOT_FORMAT = 1;

export interface PartitionSnapshot {
  format: number;
  /** 'file:<logId>' or 'kafka:<topic>:<topic id>': the log the view was folded from. */
  logId: string;
  partition: number;
  /** The view holds every record below this offset, none at or after it. */
  nextOffset: bigint;
  /** The writer's wall clock when it was taken (epoch ms). */
  takenAt: number;
  /** A PartitionState, encoded (snapshot-codec.ts). */
  state: Uint8Array;
  /** SHA-256 of the fields above (snapshotChecksum). */
  checksum: Uint8Array;
}

export interface SnapshotLease {
  holder: string;
  epoch: number;
  expiresAt: number;
}

export interface SnapshotAttempt {
  runId: string;
  attempt: number;
  epoch: number;
  startedAt: number;
  /** Its AttemptStarted record's offset (-1: a view not tracking offsets). */
  offset: number;
}

/** One entry whole (projections/entry-state.ts). */
export interface SnapshotEntry {
  entryId: string;
  seq: number;
  agent: string;
  input: Uint8Array;
  key: string | null;
  priority: number;
  deadline: number | null;
  maxAttempts: number;
  metadata: Record<string, string>;
  submittedAt: number;
  /** Its Submitted record's offset (-1: a view not tracking offsets). */
  submittedOffset: number;
  notBefore: number | null;
  lease: SnapshotLease | null;
  lastEpoch: number;
  deferredAttempts: number;
  attempts: SnapshotAttempt[];
  outcome: Outcome | null;
  result: Uint8Array | null;
  error: string | null;
  closedAt: number | null;
}

export interface SnapshotThread {
  tenant: string;
  thread: string;
  /** Open entries, head first. */
  open: SnapshotEntry[];
}

export interface SnapshotClosedEntry {
  tenant: string;
  thread: string;
  entry: SnapshotEntry;
}

/** A ticket index column: a typed array's little-endian bytes, or a string table. */
export interface SnapshotColumn {
  name: string;
  bytes: Uint8Array;
  strings: string[];
}

export interface SnapshotAnswer {
  tenant: string;
  requestId: string;
  command: 'submit' | 'cancel';
  entryId: string | null;
  code: string | null;
  message: string | null;
  at: number;
  owned: boolean;
}

export interface SnapshotMetrics {
  enqueued: number;
  processed: number;
  succeeded: number;
  failed: number;
  retried: number;
  expired: number;
  cancelled: number;
  dropped: number;
  totalWaitMs: number;
  maxWaitMs: number;
  totalExecMs: number;
  maxExecMs: number;
}

export interface PartitionState {
  lastAt: number;
  issuedThrough: number;
  ticketKey: { secret: Uint8Array; legacyThrough: number } | null;
  metrics: SnapshotMetrics;
  threads: SnapshotThread[];
  /** Closed entries kept whole, oldest close first (a view keeping them whole). */
  closedEntries: SnapshotClosedEntry[];
  /** Closed entries as the ticket index's columns (a view indexing them). */
  closedIndex: SnapshotColumn[];
  submissionKeys: Array<{ id: string; entryId: string }>;
  /** Owned answers first, then the loose ones in prune order. */
  answers: SnapshotAnswer[];
}
