/**
 * The runlog side of the Java producer test: a runlog owner of every partition serving the
 * commands topic, and what it answered, read from the events topic as any consumer reads it.
 */
import assert from 'node:assert/strict';
import { CommandIntake } from '../../src/cluster/command-intake.ts';
import type { CommandAnswered, RunlogEvent } from '../../src/events/types.ts';
import { decodeEvent } from '../../src/events/codec.ts';
import { commandsTopicOf, openKafkaCommandSource } from '../../src/log/kafka/command-source.ts';
import { openKafkaLog } from '../../src/log/kafka/kafka-log.ts';
import { partitionOf } from '../../src/log/partitioner.ts';
import { openRunQueueOnLog } from '../../src/queue/open-run-queue.ts';
import { deleteTopic, kafkaBrokers } from '../log/kafka-test-support.ts';
import { onCleanup, type AfterHooks } from '../support/cleanup.ts';
import { READ_TIMEOUT_MS, readRecords, type TopicRecord } from './kafka-records.ts';

/**
 * A runlog owner of every partition of the events topic `topic`, in this process: a RunQueue on
 * the Kafka log (ownership 'assigned', every partition acquired: claimed and replayed) and its
 * command intake reading `<topic>.commands` (created here, as a node does) read_committed from
 * the committed offsets of `<topic>-owner.commands`. Stopped, and both topics deleted, after the test.
 */
export async function startOwner(t: AfterHooks, topic: string, partitions: number): Promise<void> {
  onCleanup(t, async () => {
    await deleteTopic(commandsTopicOf(topic));
    await deleteTopic(topic);
  });
  const brokers = kafkaBrokers();
  const log = await openKafkaLog({ brokers, topic, partitions });
  const queue = await openRunQueueOnLog(log, { ownership: 'assigned' });
  onCleanup(t, () => queue.stop());
  const source = await openKafkaCommandSource({ brokers, topic, group: `${topic}-owner`, partitions });
  onCleanup(t, () => source.close());
  const intake = new CommandIntake({ queue, source });
  onCleanup(t, () => intake.stopAll());
  for (let p = 0; p < partitions; p++) {
    await queue.acquire(p);
    intake.start(p);
  }
}

/** Thread names `<prefix>-<n>` of `tenant`, the first one of each partition, indexed by partition. */
export function threadPerPartition(tenant: string, prefix: string, partitions: number): string[] {
  const threads = Array.from({ length: partitions }, (): string | undefined => undefined);
  for (let n = 0; threads.includes(undefined); n++) {
    assert.ok(n < 10_000, 'no thread name found for some partition');
    threads[partitionOf(tenant, `${prefix}-${n}`, partitions)] ??= `${prefix}-${n}`;
  }
  return threads as string[];
}

/** The events of the events topic, read_committed (tombstones left out), once `until` holds for them. */
export async function readEvents(topic: string, until: (events: readonly RunlogEvent[]) => boolean): Promise<RunlogEvent[]> {
  const decode = (records: readonly TopicRecord[]): RunlogEvent[] =>
    records.flatMap((r) => (r.value === null ? [] : [decodeEvent(new Uint8Array(r.value))]));
  const records = await readRecords(topic, { readUncommitted: false, until: (seen) => until(decode(seen)), timeoutMs: READ_TIMEOUT_MS });
  return decode(records);
}

/** The CommandAnswered events by request id, in the order written. */
export function answersOf(events: readonly RunlogEvent[]): Map<string, CommandAnswered[]> {
  const answers = new Map<string, CommandAnswered[]>();
  for (const e of events) if (e.type === 'CommandAnswered') answers.set(e.requestId, [...(answers.get(e.requestId) ?? []), e]);
  return answers;
}

/** Holds once every request id has at least its expected number of answers. */
export function answered(expected: Record<string, number>): (events: readonly RunlogEvent[]) => boolean {
  return (events) => {
    const answers = answersOf(events);
    return Object.entries(expected).every(([id, n]) => (answers.get(id)?.length ?? 0) >= n);
  };
}
