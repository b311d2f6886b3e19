/**
 * How far a soak has come, read from the events topic as it grows: a read-only tail of every
 * partition (it fences no writer) noting the entry ids that closed. The soak waits on it
 * until every acknowledged entry is closed; the checker later reads the topic again whole.
 */
import { decodeEvent } from '../../src/events/codec.ts';
import { openKafkaLog } from '../../src/log/kafka/kafka-log.ts';
import { tailAll } from '../../src/log/tail-all.ts';

export class ClosedTracker {
  readonly closed = new Set<string>();
  readonly #stop = new AbortController();
  #following: Promise<void> = Promise.resolve();

  static async open(brokers: readonly string[], topic: string): Promise<ClosedTracker> {
    const tracker = new ClosedTracker();
    const log = await openKafkaLog({ brokers: [...brokers], topic, readOnly: true, clientId: 'runlog-soak-progress', tailWaitMs: 100 });
    tracker.#following = tracker.#follow(log);
    return tracker;
  }

  async #follow(log: Awaited<ReturnType<typeof openKafkaLog>>): Promise<void> {
    try {
      const partitions = Array.from({ length: log.partitions }, (_, p) => p);
      for await (const { record } of tailAll(
        log,
        partitions,
        partitions.map(() => 0n),
        this.#stop.signal,
      )) {
        if (record.value === null) continue;
        const event = decodeEvent(record.value);
        if (event.type === 'Closed') this.closed.add(event.entryId);
      }
    } finally {
      await log.close();
    }
  }

  async stop(): Promise<void> {
    this.#stop.abort();
    await this.#following;
  }
}
