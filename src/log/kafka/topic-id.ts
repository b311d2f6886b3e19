/**
 * A Kafka topic's id: the UUID the cluster gives a topic when it creates it (Kafka 2.8+). A
 * topic deleted and created again under the same name gets a new one, so it tells a
 * snapshot of this topic from one of an earlier topic of the same name (snapshot-store.ts).
 *
 * kafkajs 2.2 speaks Metadata up to v6, which carries no topic ids, so this sends one
 * Metadata v10 request (the first version with ids; flexible: compact strings and arrays,
 * tagged fields) on a socket of its own, over PLAINTEXT as runlog's Kafka clients connect,
 * and reads the response only as far as the first topic's id. Each broker in the list is
 * tried in turn; an answer without an id (all zeros: a cluster older than 2.8) is none.
 */
import { connect, type Socket } from 'node:net';
import { RunlogError } from '../../errors.ts';

const METADATA = 3;
const VERSION = 10;
const TIMEOUT_MS = 10_000;

/** `topic`'s id as 32 hex digits; null when the brokers answer but keep no ids; throws LogUnavailable when none answers. */
export async function fetchTopicId(brokers: readonly string[], topic: string, clientId: string): Promise<string | null> {
  const failures: string[] = [];
  for (const broker of brokers) {
    try {
      return topicIdIn(await exchange(broker, metadataRequest(topic, clientId)), topic);
    } catch (error) {
      failures.push(`${broker}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  throw new RunlogError('LogUnavailable', `cannot learn the topic id of Kafka topic ${topic}: ${failures.join('; ')}`);
}

function metadataRequest(topic: string, clientId: string): Buffer {
  const name = Buffer.from(topic, 'utf8');
  const client = Buffer.from(clientId, 'utf8');
  const parts = [
    int16(METADATA),
    int16(VERSION),
    int32(1), // correlation id
    int16(client.length),
    client,
    uvarint(0), // header tagged fields
    uvarint(2), // compact array of one topic
    Buffer.alloc(16), // topic id: unknown, asked by name
    uvarint(name.length + 1),
    name,
    uvarint(0), // topic tagged fields
    Buffer.from([0, 0, 0]), // allow_auto_topic_creation, include_cluster_/topic_authorized_operations: false
    uvarint(0), // body tagged fields
  ];
  const body = Buffer.concat(parts);
  return Buffer.concat([int32(body.length), body]);
}

/** Sends `request` to `broker` and resolves the response's bytes (after its size). */
function exchange(broker: string, request: Buffer): Promise<Buffer> {
  const at = broker.lastIndexOf(':');
  const [host, port] = [broker.slice(0, at), Number(broker.slice(at + 1))];
  return new Promise((resolve, reject) => {
    const socket: Socket = connect({ host, port });
    const chunks: Buffer[] = [];
    let received = 0;
    const fail = (error: Error): void => {
      socket.destroy();
      reject(error);
    };
    socket.setTimeout(TIMEOUT_MS, () => fail(new Error(`no answer in ${TIMEOUT_MS} ms`)));
    socket.on('error', fail);
    socket.on('close', () => reject(new Error('the broker closed the connection (Metadata v10 unsupported?)')));
    socket.on('connect', () => socket.write(request));
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      received += chunk.length;
      if (received < 4) return;
      const all = Buffer.concat(chunks);
      const size = all.readInt32BE(0);
      if (all.length < 4 + size) return;
      socket.destroy();
      resolve(all.subarray(4, 4 + size));
    });
  });
}

/** Reads a Metadata v10 response up to its first topic's id. */
function topicIdIn(response: Buffer, topic: string): string | null {
  const r = new Reader(response);
  r.skip(4); // correlation id
  r.tags(); // response header v1
  r.skip(4); // throttle_time_ms
  for (let brokers = r.compactLength(); brokers > 0; brokers--) {
    r.skip(4); // node_id
    r.compactString(); // host
    r.skip(4); // port
    r.compactString(); // rack
    r.tags();
  }
  r.compactString(); // cluster_id
  r.skip(4); // controller_id
  if (r.compactLength() < 1) throw new Error('the answer names no topic');
  const errorCode = r.int16();
  const name = r.compactString();
  const id = r.bytes(16).toString('hex');
  if (errorCode !== 0 || name !== topic) throw new Error(`the broker answered error code ${errorCode} for topic ${name ?? '(none)'}`);
  return /^0+$/.test(id) ? null : id;
}

class Reader {
  #at = 0;

  constructor(private readonly buffer: Buffer) {}

  skip(bytes: number): void {
    this.bytes(bytes);
  }

  bytes(count: number): Buffer {
    if (this.#at + count > this.buffer.length) throw new Error('the answer ends early');
    const out = this.buffer.subarray(this.#at, this.#at + count);
    this.#at += count;
    return out;
  }

  int16(): number {
    return this.bytes(2).readInt16BE(0);
  }

  uvarint(): number {
    let value = 0;
    for (let shift = 0; shift < 35; shift += 7) {
      const byte = this.bytes(1)[0]!;
      value += (byte & 0x7f) * 2 ** shift;
      if ((byte & 0x80) === 0) return value;
    }
    throw new Error('a malformed varint in the answer');
  }

  /** A compact array's element count (its varint is count + 1; 0 is null). */
  compactLength(): number {
    return Math.max(0, this.uvarint() - 1);
  }

  compactString(): string | null {
    const length = this.uvarint();
    return length === 0 ? null : this.bytes(length - 1).toString('utf8');
  }

  /** Skips a tagged-fields section. */
  tags(): void {
    for (let count = this.uvarint(); count > 0; count--) {
      this.uvarint(); // tag
      this.skip(this.uvarint());
    }
  }
}

function int16(value: number): Buffer {
  const out = Buffer.alloc(2);
  out.writeInt16BE(value);
  return out;
}

function int32(value: number): Buffer {
  const out = Buffer.alloc(4);
  out.writeInt32BE(value);
  return out;
}

function uvarint(value: number): Buffer {
  const out: number[] = [];
  while (value > 0x7f) {
    out.push((value & 0x7f) | 0x80);
    value >>>= 7;
  }
  out.push(value);
  return Buffer.from(out);
}
