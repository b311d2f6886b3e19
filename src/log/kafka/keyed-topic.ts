/**
 * A small keyed store on a compacted Kafka topic of one partition (projection checkpoints:
 * src/projector/kafka-checkpoints.ts): save sends a record under a key (idempotent producer,
 * acks=-1, not transactional, so any number of processes may write their own keys without
 * fencing each other); load reads the partition up to its end and answers the latest value
 * of the key; remove writes a tombstone. Compaction keeps it small. Records may be up to
 * 32 MiB (the topic's max.message.bytes, set when this creates the topic).
 */
import kafkajs from 'kafkajs';
import type { Admin, Kafka, Producer } from 'kafkajs';
import { quietLogCreator, toRunlogError } from './errors.ts';
import { readPartition } from './partition-reader.ts';
import { ensureTopic } from './topic.ts';

export interface KeyedTopicOptions {
  brokers: string[];
  topic: string;
  clientId?: string;
}

export interface KeyedTopic {
  load(key: string): Promise<Uint8Array | null>;
  save(key: string, value: Uint8Array): Promise<void>;
  remove(key: string): Promise<void>;
  close(): Promise<void>;
}

const MAX_MESSAGE_BYTES = String(32 * 1024 * 1024);

export async function openKeyedTopic(options: KeyedTopicOptions): Promise<KeyedTopic> {
  const kafka = new kafkajs.Kafka({
    clientId: options.clientId ?? 'runlog',
    brokers: options.brokers,
    logLevel: kafkajs.logLevel.ERROR,
    logCreator: quietLogCreator,
    retry: { initialRetryTime: 100, retries: 8 },
  });
  const admin = kafka.admin();
  try {
    await admin.connect();
    await ensureTopic(admin, { topic: options.topic, partitions: 1, topicConfig: { 'max.message.bytes': MAX_MESSAGE_BYTES } });
  } catch (error) {
    await admin.disconnect().catch(() => undefined);
    throw toRunlogError(error, `opening Kafka topic ${options.topic} on ${options.brokers.join(',')}`);
  }
  return new KafkaKeyedTopic(kafka, admin, options.topic);
}

class KafkaKeyedTopic implements KeyedTopic {
  #producer: Promise<Producer> | null = null;
  #closed = false;

  constructor(
    private readonly kafka: Kafka,
    private readonly admin: Admin,
    private readonly topic: string,
  ) {}

  async load(key: string): Promise<Uint8Array | null> {
    const end = await this.#end();
    let latest: Uint8Array | null = null;
    const range = {
      topic: this.topic,
      partition: 0,
      from: 0n,
      end,
      maxRecords: Number.POSITIVE_INFINITY,
      maxWaitMs: 100,
      stableEnd: () => this.#end(),
    };
    for await (const record of readPartition(this.kafka, range)) if (record.key === key) latest = record.value;
    return latest;
  }

  async save(key: string, value: Uint8Array | null): Promise<void> {
    const producer = await this.#connected();
    try {
      await producer.send({ topic: this.topic, acks: -1, messages: [{ key, value: value === null ? null : Buffer.from(value) }] });
    } catch (error) {
      throw toRunlogError(error, `writing ${key} to Kafka topic ${this.topic}`);
    }
  }

  remove(key: string): Promise<void> {
    return this.save(key, null);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    const producer = this.#producer;
    if (producer !== null) await (await producer.catch(() => null))?.disconnect();
    await this.admin.disconnect();
  }

  async #end(): Promise<bigint> {
    try {
      const [offsets] = await this.admin.fetchTopicOffsets(this.topic);
      return BigInt(offsets!.high);
    } catch (error) {
      throw toRunlogError(error, `reading the end of Kafka topic ${this.topic}`);
    }
  }

  #connected(): Promise<Producer> {
    this.#producer ??= (async () => {
      const producer = this.kafka.producer({ idempotent: true, maxInFlightRequests: 1, allowAutoTopicCreation: false });
      await producer.connect();
      return producer;
    })();
    return this.#producer;
  }
}
