/**
 * The commands topic of a Kafka EventLog: `<events topic>.commands`, with the events topic's
 * partition count and cleanup.policy=delete (created if missing, checked if present), read
 * with read_committed from the committed offsets of consumer group `<group>.commands`.
 * Nothing here commits an offset: the queue's appends do, in the transaction of the answers
 * (EventLog.append's `consumed`, transaction-pipeline.ts).
 */
import kafkajs from 'kafkajs';
import type { Admin, Kafka } from 'kafkajs';
import { RunlogError } from '../../errors.ts';
import { describe, requireInteger, requireName, requireNames, requireObject } from '../../validation/index.ts';
import type { CommandSource } from '../command-source.ts';
import type { LogRecord } from '../event-log.ts';
import { checkPartition, checkPartitionCount } from '../log-arguments.ts';
import { quietLogCreator, toRunlogError } from './errors.ts';
import { readPartition } from './partition-reader.ts';
import { existingPartitionCount, waitUntilServed } from './topic.ts';

export interface KafkaCommandSourceOptions {
  brokers: string[];
  /** The events topic: the commands topic is `<topic>.commands`. */
  topic: string;
  /** The cluster's group: offsets are committed to `<group>.commands`. */
  group: string;
  /** The events topic's partition count (the commands topic must have as many). */
  partitions: number;
  clientId?: string;
  /** How long a tail's fetch waits on the broker for new commands (default 100 ms). */
  tailWaitMs?: number;
}

export function commandsTopicOf(topic: string): string {
  return `${topic}.commands`;
}

export function commandsGroupOf(group: string): string {
  return `${group}.commands`;
}

/** Opens (creating the topic if missing) the commands source of an events topic. */
export async function openKafkaCommandSource(options: KafkaCommandSourceOptions): Promise<CommandSource> {
  const body = requireObject('command source options', options, ['brokers', 'topic', 'group', 'partitions', 'clientId', 'tailWaitMs']);
  requireNames('brokers', body.brokers);
  if (typeof body.topic !== 'string' || !/^[a-zA-Z0-9._-]{1,240}$/.test(body.topic)) {
    throw new RunlogError('InvalidArgument', `topic must be a legal Kafka topic name ([a-zA-Z0-9._-]), got ${describe(body.topic)}`);
  }
  requireName('group', body.group);
  checkPartitionCount(body.partitions, 'kafka');
  if (body.tailWaitMs !== undefined) requireInteger('tailWaitMs', body.tailWaitMs, 1, 60_000);
  const kafka = new kafkajs.Kafka({
    clientId: options.clientId ?? 'runlog-commands',
    brokers: options.brokers,
    logLevel: kafkajs.logLevel.ERROR,
    logCreator: quietLogCreator,
    retry: { initialRetryTime: 100, retries: 8 },
  });
  const admin = kafka.admin();
  const topic = commandsTopicOf(options.topic);
  try {
    await admin.connect();
    await ensureCommandsTopic(admin, topic, options.partitions);
  } catch (error) {
    await admin.disconnect().catch(() => undefined);
    throw toRunlogError(error, `opening the commands topic ${topic}`);
  }
  return new KafkaCommandSource(kafka, admin, { ...options, topic });
}

async function ensureCommandsTopic(admin: Admin, topic: string, partitions: number): Promise<void> {
  const existing = await existingPartitionCount(admin, topic);
  if (existing === null) {
    const configEntries = [{ name: 'cleanup.policy', value: 'delete' }];
    await admin
      .createTopics({ waitForLeaders: true, topics: [{ topic, numPartitions: partitions, configEntries }] })
      .catch((error: unknown) => {
        if ((error as { type?: string }).type !== 'TOPIC_ALREADY_EXISTS') throw error;
      });
    await waitUntilServed(admin, topic);
  } else if (existing !== partitions) {
    throw new RunlogError(
      'InvalidArgument',
      `the commands topic ${topic} has ${existing} partitions, but its events topic has ${partitions}: they must be co-partitioned`,
    );
  }
}

class KafkaCommandSource implements CommandSource {
  readonly topic: string;
  readonly group: string;
  readonly partitions: number;
  readonly #kafka: Kafka;
  readonly #admin: Admin;
  readonly #tailWaitMs: number;
  readonly #readers = new Set<AbortController>();
  #closed = false;

  constructor(kafka: Kafka, admin: Admin, options: KafkaCommandSourceOptions) {
    this.#kafka = kafka;
    this.#admin = admin;
    this.topic = options.topic;
    this.group = commandsGroupOf(options.group);
    this.partitions = options.partitions;
    this.#tailWaitMs = options.tailWaitMs ?? 100;
  }

  async committedOffset(partition: number): Promise<bigint> {
    const p = this.#open(partition);
    try {
      const [offsets] = await this.#admin.fetchOffsets({ groupId: this.group, topics: [this.topic] });
      const offset = offsets?.partitions.find((entry) => entry.partition === p)?.offset ?? '-1';
      return offset === '-1' ? 0n : BigInt(offset);
    } catch (error) {
      throw toRunlogError(error, `reading the committed offset of group ${this.group} on partition ${p} of ${this.topic}`);
    }
  }

  async *tail(partition: number, from: bigint, signal: AbortSignal): AsyncGenerator<LogRecord> {
    const p = this.#open(partition);
    if (typeof from !== 'bigint' || from < 0n)
      throw new RunlogError('InvalidArgument', `from must be a non-negative bigint, got ${describe(from)}`);
    const stop = new AbortController();
    this.#readers.add(stop);
    try {
      const range = { topic: this.topic, partition: p, from, end: null, maxRecords: Number.POSITIVE_INFINITY };
      const unbounded = (): Promise<bigint> => Promise.reject(new Error('a tail has no end'));
      yield* readPartition(this.#kafka, {
        ...range,
        maxWaitMs: this.#tailWaitMs,
        signal: AbortSignal.any([signal, stop.signal]),
        stableEnd: unbounded,
      });
    } finally {
      this.#readers.delete(stop);
    }
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    for (const reader of this.#readers) reader.abort();
    await this.#admin.disconnect().catch(() => undefined);
  }

  #open(partition: number): number {
    if (this.#closed) throw new RunlogError('Stopped', `the commands source of ${this.topic} is closed`);
    return checkPartition(partition, this.partitions);
  }
}
