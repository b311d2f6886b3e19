/**
 * Snapshots beside a Kafka log (the store src/log/snapshot-store.ts describes), in the compacted
 * topic `<topic>.snapshots`: as many partitions as the log's topic, log partition n's snapshots
 * in its partition n. The topic is created (compacted, max.message.bytes 8 MiB) by the first
 * save, not by opening the log: most opens never snapshot (readers, tools, short tests), and
 * creating a topic costs a round of the controller. A snapshot is split into chunks of up to
 * 4 MiB (less if the topic allows less), one record each (snapshot-chunks.ts), so its size is
 * bound by memory, not by max.message.bytes or the broker's request size; a save that fails
 * (the broker refuses, the topic is misconfigured) is the keeper's RUNLOG_SNAPSHOT_FAILED
 * warning, never the queue's failure.
 *
 * Keeping two: chunks are keyed `<slot>.<index>` and saves alternate between slots a and b, so
 * compaction (latest record per key) keeps the newest snapshot AND the one before it, the
 * fallback if the newest is damaged. A save cut short leaves chunks of its slot overwritten
 * with no whole snapshot among them: that slot's older snapshot, once compacted, is not whole
 * either, and the other slot's serves. A save with fewer chunks than its slot held tombstones
 * the extra keys, so no dead chunk stays.
 *
 * Identity: a snapshot names `kafka:<topic>:<topic id>` (topic-id.ts), so one of an earlier
 * topic of the same name, deleted and created again, is not trusted.
 *
 * Staleness: the broker's cleaner drops a tombstone no sooner than delete.retention.ms after
 * it first cleans the tombstone's segment, so no sooner than delete.retention.ms after the
 * tombstone was written. Every record a snapshot did not see (at or past its nextOffset) was
 * written after the snapshot was taken (it is taken with no append in flight). So a snapshot
 * younger than the data topic's delete.retention.ms (less a margin for clocks: a tenth of it,
 * at most a minute) cannot miss a dropped tombstone; an older one may, and is stale.
 */
import kafkajs from 'kafkajs';
import type { Admin, Kafka, Producer } from 'kafkajs';
import { RunlogError } from '../../errors.ts';
import type { SnapshotStore, StoredSnapshot } from '../snapshot-store.ts';
import { toRunlogError } from './errors.ts';
import { readPartition } from './partition-reader.ts';
import { chunkData, chunkKey, parseChunk, parseChunkKey, toChunks, type Slot } from './snapshot-chunks.ts';
import { ensureTopic, existingPartitionCount } from './topic.ts';

const MAX_MESSAGE_BYTES = 8 << 20;
const MAX_CHUNK_BYTES = 4 << 20;
/** A record batch's and a record's overhead, the chunk header and its key, with room to spare (batch-size.ts). */
const RECORD_OVERHEAD_BYTES = 256;
const READ_WAIT_MS = 100;
const MAX_CLOCK_MARGIN_MS = 60_000;

export interface KafkaSnapshotStoreOptions {
  /** The log's clients: `readers` scan the topic, `writers` produce to it. */
  clients: { readers: Kafka; writers: Kafka };
  admin: Admin;
  /** The log's (data) topic; the snapshots live in `<topic>.snapshots`. */
  dataTopic: string;
  topicId: string;
  partitions: number;
  replicationFactor?: number;
  readOnly: boolean;
}

/** What a scan of one partition of the snapshots topic found: each whole snapshot, and each slot's chunk keys. */
interface Found {
  id: string;
  slot: Slot;
  nextOffset: bigint;
  /** Chunk offsets by index; whole when every index up to count - 1 is here. */
  offsets: (bigint | undefined)[];
  count: number;
}

export class KafkaSnapshotStore implements SnapshotStore {
  readonly logId: string;
  readonly topic: string;
  readonly #o: KafkaSnapshotStoreOptions;
  /** The chunk size the topic allows, once the topic is known to be there (created by the first save). */
  #chunkBytes: Promise<number> | null = null;
  #producer: Promise<Producer> | null = null;
  /** Per partition: the slot of the newest whole snapshot, and how many chunk keys each slot holds (learnt by list). */
  readonly #newest = new Map<number, Slot>();
  readonly #keys = new Map<string, number>();
  #closed = false;

  constructor(options: KafkaSnapshotStoreOptions) {
    this.#o = options;
    this.logId = `kafka:${options.dataTopic}:${options.topicId}`;
    this.topic = `${options.dataTopic}.snapshots`;
  }

  async save(partition: number, bytes: Uint8Array, nextOffset: bigint): Promise<void> {
    if (this.#o.readOnly)
      throw new RunlogError('InvalidArgument', `the Kafka log of topic ${this.#o.dataTopic} is open read-only: no snapshot is saved`);
    this.#refuseIfClosed();
    const chunkBytes = await this.#ready();
    const slot: Slot = this.#newest.get(partition) === 'a' ? 'b' : 'a';
    const chunks = toChunks(slot, bytes, nextOffset, chunkBytes);
    const held = this.#keys.get(`${partition}:${slot}`) ?? 0;
    const tombstones = Array.from({ length: Math.max(0, held - chunks.length) }, (_, i) => ({
      key: chunkKey(slot, chunks.length + i),
      value: null,
    }));
    const producer = await this.#connected();
    try {
      // One record per request: a chunk alone fills a record batch; acks=-1, so each is durable before the next.
      for (const message of [...chunks, ...tombstones])
        await producer.send({ topic: this.topic, acks: -1, messages: [{ ...message, partition }] });
    } catch (error) {
      throw toRunlogError(error, `saving a snapshot of partition ${partition} to Kafka topic ${this.topic}`);
    }
    this.#newest.set(partition, slot);
    this.#keys.set(`${partition}:${slot}`, chunks.length);
  }

  /** `partition`'s whole snapshots, newest first. A scan that fails is listed as one snapshot that cannot be read (warned, ignored). */
  async list(partition: number): Promise<StoredSnapshot[]> {
    this.#refuseIfClosed();
    let found: Found[];
    try {
      found = await this.#scan(partition);
    } catch (error) {
      const failed = toRunlogError(error, `reading the snapshots of partition ${partition} in Kafka topic ${this.topic}`);
      return [{ name: `${this.topic} partition ${partition}`, read: () => Promise.reject(failed) }];
    }
    return found.map((snapshot) => ({
      name: `${this.topic} partition ${partition} at offsets ${first(snapshot)}..${last(snapshot)} (slot ${snapshot.slot}, ${snapshot.count} records, covering offsets below ${snapshot.nextOffset})`,
      read: () => this.#read(partition, snapshot),
    }));
  }

  async staleness(partition: number): Promise<(nextOffset: bigint, takenAt: number) => string | null> {
    void partition; // one rule for every partition: the topic's delete.retention.ms
    let retentionMs: number;
    try {
      retentionMs = await this.#deleteRetentionMs();
    } catch (error) {
      const why = error instanceof Error ? error.message : String(error);
      return () => `the topic's delete.retention.ms could not be read, so any snapshot may miss dropped tombstones (${why})`;
    }
    const limitMs = retentionMs - Math.min(MAX_CLOCK_MARGIN_MS, retentionMs / 10);
    return (_nextOffset, takenAt) => {
      const ageMs = Date.now() - takenAt;
      return ageMs < limitMs
        ? null
        : `it was taken ${ageMs} ms ago, and the broker may have dropped tombstones it did not see after delete.retention.ms (${retentionMs} ms, less a margin for clocks)`;
    };
  }

  /** Disconnects the producer; nothing connects again after (kafkajs would reconnect on a later call: refused instead). */
  async close(): Promise<void> {
    this.#closed = true;
    const producer = this.#producer;
    if (producer !== null) await (await producer.catch(() => null))?.disconnect();
  }

  #refuseIfClosed(): void {
    if (this.#closed) throw new RunlogError('Stopped', `the Kafka log of topic ${this.#o.dataTopic} is closed: its snapshots too`);
  }

  /** Scans the partition whole: each chunk's header (the values are not kept), grouped into snapshots. */
  async #scan(partition: number): Promise<Found[]> {
    if ((await existingPartitionCount(this.#o.admin, this.topic)) === null) return [];
    const end = await this.#end(partition);
    const byId = new Map<string, Found>();
    const keys = { a: -1, b: -1 };
    for await (const record of this.#records(partition, 0n, end)) {
      const key = parseChunkKey(record.key);
      const header = record.value === null ? null : parseChunk(record.value);
      if (key === null || header === null || key.index !== header.index) continue;
      keys[key.slot] = Math.max(keys[key.slot], key.index);
      const known = byId.get(header.id) ?? {
        id: header.id,
        slot: key.slot,
        nextOffset: header.nextOffset,
        offsets: new Array<bigint | undefined>(header.count).fill(undefined),
        count: header.count,
      };
      if (known.slot === key.slot && known.count === header.count) known.offsets[header.index] = record.offset;
      byId.set(header.id, known);
    }
    this.#keys.set(`${partition}:a`, keys.a + 1);
    this.#keys.set(`${partition}:b`, keys.b + 1);
    const whole = [...byId.values()].filter((s) => s.offsets.every((offset) => offset !== undefined));
    whole.sort((x, y) => (last(x) > last(y) ? -1 : 1));
    if (whole[0] !== undefined) this.#newest.set(partition, whole[0].slot);
    return whole;
  }

  /** A snapshot's bytes, its chunks read back by offset (a chunk overwritten and compacted away since the scan: it is gone). */
  async #read(partition: number, snapshot: Found): Promise<Uint8Array> {
    const wanted = new Map(snapshot.offsets.map((offset, index) => [offset, index]));
    const parts = new Array<Uint8Array | undefined>(snapshot.count).fill(undefined);
    for await (const record of this.#records(partition, first(snapshot), last(snapshot) + 1n)) {
      const index = wanted.get(record.offset);
      if (index !== undefined && record.value !== null && parseChunk(record.value)?.id === snapshot.id)
        parts[index] = chunkData(record.value);
    }
    const missing = parts.findIndex((part) => part === undefined);
    if (missing >= 0) {
      throw new Error(
        `its chunk ${missing} of ${snapshot.count} is gone (overwritten by a newer snapshot and compacted since it was listed)`,
      );
    }
    return Buffer.concat(parts as Uint8Array[]);
  }

  #records(partition: number, from: bigint, end: bigint): AsyncIterable<{ offset: bigint; key: string; value: Uint8Array | null }> {
    return readPartition(this.#o.clients.readers, {
      topic: this.topic,
      partition,
      from,
      end,
      maxRecords: Number.POSITIVE_INFINITY,
      maxWaitMs: READ_WAIT_MS,
      stableEnd: () => this.#end(partition),
    });
  }

  async #end(partition: number): Promise<bigint> {
    const offsets = await this.#o.admin.fetchTopicOffsets(this.topic);
    const high = offsets.find((o) => o.partition === partition)?.high;
    if (high === undefined) throw new RunlogError('LogUnavailable', `Kafka topic ${this.topic} has no partition ${partition}`);
    return BigInt(high);
  }

  /** Creates the topic if missing (checked: compacted, the log's partition count) and answers the chunk size it allows. */
  #ready(): Promise<number> {
    this.#chunkBytes ??= (async () => {
      const { partitions, replicationFactor } = this.#o;
      const spec = { topic: this.topic, partitions, topicConfig: { 'max.message.bytes': String(MAX_MESSAGE_BYTES) } };
      const facts = await ensureTopic(this.#o.admin, { ...spec, ...(replicationFactor ? { replicationFactor } : {}) });
      const chunkBytes = Math.min(MAX_CHUNK_BYTES, facts.maxMessageBytes - RECORD_OVERHEAD_BYTES);
      if (chunkBytes < 1) {
        throw new RunlogError(
          'InvalidArgument',
          `Kafka topic ${this.topic}: its max.message.bytes ${facts.maxMessageBytes} leaves no room for a snapshot's chunk`,
        );
      }
      return chunkBytes;
    })();
    this.#chunkBytes.catch(() => {
      this.#chunkBytes = null; // the next save tries again
    });
    return this.#chunkBytes;
  }

  async #deleteRetentionMs(): Promise<number> {
    const described = await this.#o.admin.describeConfigs({
      includeSynonyms: false,
      resources: [{ type: kafkajs.ConfigResourceTypes.TOPIC, name: this.#o.dataTopic, configNames: ['delete.retention.ms'] }],
    });
    const value = Number(described.resources[0]?.configEntries.find((c) => c.configName === 'delete.retention.ms')?.configValue);
    if (!Number.isFinite(value) || value < 0) throw new Error(`delete.retention.ms of topic ${this.#o.dataTopic} is not a number`);
    return value;
  }

  #connected(): Promise<Producer> {
    this.#producer ??= (async () => {
      const producer = this.#o.clients.writers.producer({ idempotent: true, maxInFlightRequests: 1, allowAutoTopicCreation: false });
      await producer.connect();
      return producer;
    })();
    return this.#producer;
  }
}

/** The lowest and highest offsets of a whole snapshot's chunks (chunks are written in order, but a writer's retry may reorder nothing else). */
function first(snapshot: Found): bigint {
  return (snapshot.offsets as bigint[]).reduce((a, b) => (b < a ? b : a));
}

function last(snapshot: Found): bigint {
  return (snapshot.offsets as bigint[]).reduce((a, b) => (b > a ? b : a));
}
