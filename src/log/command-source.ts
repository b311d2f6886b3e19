/**
 * Where a command intake (src/cluster/command-intake.ts) reads the commands of its partitions
 * and finds where it stopped: the commands topic, co-partitioned with the events topic.
 * Backend-neutral: the Kafka one is src/log/kafka/command-source.ts (the only one: commands
 * topics are a Kafka feature).
 */
import type { LogRecord } from './event-log.ts';

export interface CommandSource {
  /** The commands topic, `<events topic>.commands`. */
  readonly topic: string;
  /** The consumer group whose committed offsets say which commands were answered: `<group>.commands`. */
  readonly group: string;
  readonly partitions: number;
  /**
   * The group's committed offset of `partition`: the next command to answer (0 when none was
   * committed). Ask it after claiming the events partition: the claim completes or aborts the
   * previous writer's open transaction, whose offsets commit with its events or not at all.
   */
  committedOffset(partition: number): Promise<bigint>;
  /** The committed commands (read_committed: an aborted transaction's never show) of `partition` from `from`, following new ones until the signal aborts. */
  tail(partition: number, from: bigint, signal: AbortSignal): AsyncIterable<LogRecord>;
  close(): Promise<void>;
}
