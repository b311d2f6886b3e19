/**
 * Interop: records runlog writes to Kafka are readable by others. Every record value of a
 * topic a RunQueue wrote (every event type) is decoded by Apache Avro's own Java library
 * (test/interop/, DecodeEvents: a SchemaStore.Cache of schemas/ and BinaryMessageDecoder,
 * i.e. single-object encoding with Avro's marker and fingerprint checks), and the record it
 * decodes must equal, value for value, what runlog's own decodeEvent reads from the same bytes.
 *
 * Needs a broker, java and mvn: `node test/run-tests.mjs avro-java` (starts a broker), or
 * `KAFKA_BROKERS=host:port node --import tsx --test test/interop/avro-java.kafka.test.ts`.
 * The Java part is built here (maven-build.ts: `mvn -B -q -f test/interop/pom.xml package`) unless
 * built since its sources last changed; a failed build fails the test with Maven's output.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { RELEASED_SCHEMAS, decodeEvent, schemaFor, writerSchemaFingerprint } from '../../src/events/codec.ts';
import type { AvroRecordSchema } from '../../src/events/schemas.ts';
import { EVENT_TYPES, type RunlogEvent } from '../../src/events/types.ts';
import { openKafkaLog } from '../../src/log/kafka/kafka-log.ts';
import { encodeCommand } from '../../src/events/command-codec.ts';
import type { SubmitCommand } from '../../src/events/command-types.ts';
import { partitionOf } from '../../src/log/partitioner.ts';
import { type RunQueue } from '../../src/queue/run-queue.ts';
import { openRunQueueOnLog } from '../../src/queue/open-run-queue.ts';
import { FakeClock } from '../contract/fixtures.ts';
import { deleteTopic, kafkaBrokers, uniqueTopic } from '../log/kafka-test-support.ts';
import { onCleanup } from '../support/cleanup.ts';
import { ROOT, buildInterop, run } from './maven-build.ts';

/** The schema file runlog writes an event type with: its newest version (`Closed.v2.avsc`). */
function newestSchemaFile(type: RunlogEvent['type']): string {
  const versions = RELEASED_SCHEMAS.filter((s) => s.eventType === type);
  return versions.reduce((newest, s) => (s.version > newest.version ? s : newest)).file;
}

const SCHEMAS = join(ROOT, 'schemas');
const MAIN_CLASS = 'runlog.interop.DecodeEvents';
const TTL = 30_000;

interface Decoded {
  file: string;
  schema?: string;
  writerSchema?: string;
  fingerprint?: string;
  reencodedIdentical?: boolean | null;
  record?: unknown;
  error?: string;
}

/**
 * DecodeEvents' JSON of a record (see its javadoc) back into runlog's event shape, strictly by
 * the schema: exactly the schema's fields; union branches as Avro names them ({"long": 5});
 * bytes as canonical base64; ints and longs as safe integers (a JSON integer that parses to a
 * safe integer was that integer exactly: every integer of magnitude up to 2^53 is a double).
 */
function fromJavaJson(schema: AvroRecordSchema, json: unknown): RunlogEvent {
  const record = fromJson(schema, json, schema.name) as Record<string, unknown>;
  return { type: schema.name, ...record } as RunlogEvent;
}

function fromJson(type: unknown, json: unknown, path: string): unknown {
  if (Array.isArray(type)) {
    if (json === null) {
      assert.ok(type.includes('null'), `${path}: null for a union without null`);
      return null;
    }
    assert.ok(isObject(json), `${path}: a union value must be null or {"<branch>": value}, got ${JSON.stringify(json)}`);
    const keys = Object.keys(json);
    assert.equal(keys.length, 1, `${path}: union wrapper with keys ${JSON.stringify(keys)}`);
    const branch = type.find((t) => branchName(t) === keys[0]);
    assert.ok(branch !== undefined && branch !== 'null', `${path}: branch ${keys[0]} is not in union ${JSON.stringify(type)}`);
    return fromJson(branch, json[keys[0]!], `${path}.${keys[0]}`);
  }
  const t = typeof type === 'string' ? type : (type as { type: string }).type;
  const s = type as Record<string, unknown>;
  switch (t) {
    case 'record': {
      const fields = (s.fields as { name: string; type: unknown }[]) ?? [];
      assert.ok(isObject(json), `${path}: expected an object, got ${JSON.stringify(json)}`);
      assert.deepEqual(
        Object.keys(json),
        fields.map((f) => f.name),
        `${path}: fields differ from the schema's`,
      );
      return Object.fromEntries(fields.map((f) => [f.name, fromJson(f.type, json[f.name], `${path}.${f.name}`)]));
    }
    case 'string':
      assert.equal(typeof json, 'string', `${path}: expected a string, got ${JSON.stringify(json)}`);
      return json;
    case 'enum':
      assert.ok(
        typeof json === 'string' && (s.symbols as string[]).includes(json),
        `${path}: ${JSON.stringify(json)} is no symbol of ${s.name}`,
      );
      return json;
    case 'boolean':
      assert.equal(typeof json, 'boolean', `${path}: ${JSON.stringify(json)} is no boolean`);
      return json;
    case 'int':
      assert.ok(
        Number.isInteger(json) && (json as number) >= -(2 ** 31) && (json as number) < 2 ** 31,
        `${path}: ${JSON.stringify(json)} is no int`,
      );
      return json;
    case 'long':
      assert.ok(Number.isSafeInteger(json), `${path}: ${JSON.stringify(json)} is no safe-integer long`);
      return json;
    case 'bytes': {
      assert.equal(typeof json, 'string', `${path}: expected base64, got ${JSON.stringify(json)}`);
      const bytes = Buffer.from(json as string, 'base64');
      assert.equal(bytes.toString('base64'), json, `${path}: not canonical base64: ${JSON.stringify(json)}`);
      return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength).slice();
    }
    case 'map': {
      assert.ok(isObject(json), `${path}: expected an object for a map, got ${JSON.stringify(json)}`);
      return Object.fromEntries(Object.entries(json).map(([k, v]) => [k, fromJson(s.values, v, `${path}[${JSON.stringify(k)}]`)]));
    }
    case 'array':
      assert.ok(Array.isArray(json), `${path}: expected an array, got ${JSON.stringify(json)}`);
      return json.map((item, i) => fromJson(s.items, item, `${path}[${i}]`));
    default:
      assert.fail(`${path}: schema type ${JSON.stringify(type)} is not handled by this test`);
  }
}

/** The name Avro's JSON encoding gives a union branch: a primitive's type name, a named type's full name. */
function branchName(type: unknown): string {
  if (typeof type === 'string') return type;
  const s = type as { type: string; name?: string; namespace?: string };
  if (s.name === undefined) return s.type;
  return s.name.includes('.') || s.namespace === undefined ? s.name : `${s.namespace}.${s.name}`;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Drives a queue through every event type, with optional values both set and null. */
async function driveLifecycle(queue: RunQueue, clock: FakeClock): Promise<void> {
  const start = clock.nowMs;
  // Submitted with key, metadata, notBefore and deadline; input not valid UTF-8.
  const main = await queue.submit({
    tenant: 'acme',
    thread: 'interop-main',
    agent: 'build',
    input: new Uint8Array([0, 1, 0x7f, 0x80, 0xfe, 0xff]),
    key: 'idem-1',
    strategy: 'reject',
    priority: -3,
    notBefore: start + 1_000,
    deadline: start + 600_000,
    maxAttempts: 4,
    metadata: { source: 'interop', traceparent: '00-4bf92f35-01', ünï: 'cödé ✓' },
  });
  clock.advance(1_000);
  const first = await queue.take({ agents: ['build'], holder: 'worker-a/1', ttlMs: TTL }); // Leased
  assert.equal(first?.entry.entryId, main.entryId);
  const extended = await queue.extend(first!.lease, 2 * TTL); // LeaseExtended
  await queue.startAttempt(extended, 'run-1'); // AttemptStarted
  assert.ok(await queue.yield(extended, { kind: 'retry', error: 'Error: upstream 503', delayMs: 500 })); // Yielded retry
  clock.advance(500);
  const second = await queue.take({ agents: ['build'], holder: 'worker-b/2', ttlMs: TTL });
  assert.equal(second?.entry.entryId, main.entryId);
  await queue.startAttempt(second!.lease, 'run-2');
  await queue.close(second!.lease, { status: 'succeeded', result: new Uint8Array([0xff, 0, 0xc3, 0x01]) }); // Closed, result

  // Yielded defer (null error and notBefore), then Closed failed (null result, an error).
  const deferred = await queue.submit({ tenant: 'acme', thread: 'interop-defer', agent: 'build', input: 'plain' });
  const d1 = await queue.take({ agents: ['build'], holder: 'worker-a/1', ttlMs: TTL });
  assert.equal(d1?.entry.entryId, deferred.entryId);
  assert.ok(await queue.yield(d1!.lease, { kind: 'defer' }));
  const d2 = await queue.take({ agents: ['build'], holder: 'worker-a/1', ttlMs: TTL });
  assert.equal(d2?.entry.entryId, deferred.entryId);
  await queue.close(d2!.lease, { status: 'failed', error: 'gave up' });

  const cancelled = await queue.submit({ tenant: 'acme', thread: 'interop-cancel', agent: 'build', input: '' });
  await queue.cancel('acme', cancelled.entryId, 'no longer needed'); // CancelRequested (+ Closed cancelled)
  const uncommented = await queue.submit({ tenant: 'beta', thread: 'interop-cancel', agent: 'build', input: 'x' });
  await queue.cancel('beta', uncommented.entryId); // CancelRequested, null reason

  await queue.submit({ tenant: 'acme', thread: 'interop-delete', agent: 'build', input: 'doomed', metadata: {} });
  assert.equal(await queue.deleteThread('acme', 'interop-delete'), 1); // ThreadDeleted

  clock.advance(60_000);
  assert.ok((await queue.prune(1_000, 100)) >= 1); // EntriesPruned (+ tombstones)

  // CommandAnswered: a command of the commands topic accepted (entryId set, code null), one refused (the reverse).
  const command = (requestId: string, agent: string): SubmitCommand => ({
    type: 'SubmitCommand',
    requestId,
    tenant: 'acme',
    thread: 'interop-commands',
    agent,
    input: new Uint8Array([1]),
    key: null,
    strategy: null,
    priority: null,
    notBefore: null,
    deadline: null,
    maxAttempts: null,
    metadata: {},
  });
  const home = partitionOf('acme', 'interop-commands', queue.partitions);
  assert.equal((await queue.answerCommand(home, encodeCommand(command('req-1', 'build'))))?.created, true);
  assert.equal((await queue.answerCommand(home, encodeCommand(command('req-2', ''))))?.code, 'InvalidArgument');
}

describe('Avro interop: Apache Avro (Java) reads what runlog wrote to Kafka', () => {
  it(
    'every record value of the topic decodes with BinaryMessageDecoder to the event decodeEvent reads',
    { timeout: 10 * 60_000 },
    async (t) => {
      const classpath = await buildInterop([MAIN_CLASS], [/^avro-\d.*\.jar$/]);

      const topic = uniqueTopic('runlog-interop');
      const clock = new FakeClock();
      const log = await openKafkaLog({ brokers: kafkaBrokers(), topic, partitions: 2 });
      const queue = await openRunQueueOnLog(log, { clock: clock.read });
      const dir = mkdtempSync(join(tmpdir(), 'runlog-avro-java-'));
      onCleanup(t, async () => {
        rmSync(dir, { recursive: true, force: true });
        try {
          await queue.stop();
        } finally {
          await deleteTopic(topic);
        }
      });

      await driveLifecycle(queue, clock);

      // The raw record values, as any Kafka consumer sees them.
      const written = new Map<string, Uint8Array>();
      let tombstones = 0;
      for (let p = 0; p < log.partitions; p++) {
        for await (const record of queue.log.read(p, 0n)) {
          if (record.value === null) {
            tombstones++;
            continue;
          }
          const file = `p${p}-${record.offset.toString().padStart(10, '0')}.bin`;
          writeFileSync(join(dir, file), record.value);
          written.set(file, record.value);
        }
      }
      assert.ok(tombstones > 0, 'prune wrote no tombstones');

      const result = await run('java', ['-cp', classpath, MAIN_CLASS, SCHEMAS, dir], 2 * 60_000);
      assert.equal(result.code, 0, `the Java decoder failed (exit ${result.code}):\n${result.stdout}\n${result.stderr}`);
      const lines = result.stdout.split('\n').filter((l) => l.trim() !== '');
      const decoded = lines.map((l) => JSON.parse(l) as Decoded);
      assert.deepEqual(decoded.map((d) => d.file).sort(), [...written.keys()].sort(), 'the Java decoder did not answer for every record');

      const seen = new Set<string>();
      for (const d of decoded) {
        const bytes = written.get(d.file)!;
        const expected = decodeEvent(bytes);
        const where = `${d.file} (${expected.type})`;
        assert.equal(d.error, undefined, `${where}: Avro refused it: ${d.error}`);
        assert.equal(d.schema, `runlog.events.${expected.type}`, `${where}: schema`);
        assert.equal(d.writerSchema, newestSchemaFile(expected.type), `${where}: writer schema`);
        const fingerprint = writerSchemaFingerprint(expected.type).toString(16).padStart(16, '0');
        assert.equal(d.fingerprint, fingerprint, `${where}: fingerprint`);
        assert.equal(Buffer.from(bytes.subarray(2, 10)).readBigUInt64LE().toString(16).padStart(16, '0'), fingerprint, `${where}: header`);
        assert.equal(d.reencodedIdentical, true, `${where}: Avro's BinaryMessageEncoder does not give back the same bytes`);
        assert.deepStrictEqual(fromJavaJson(schemaFor(expected.type), d.record), expected, `${where}: Avro Java read another value`);
        seen.add(expected.type);
      }
      assert.deepEqual([...seen].sort(), [...EVENT_TYPES].sort(), 'not every event type was written and checked');

      // The optional values were exercised both set and null.
      const events = decoded.map((d) => fromJavaJson(schemaFor(decodeEvent(written.get(d.file)!).type), d.record));
      const submitted = events.find((e) => e.type === 'Submitted' && e.key !== null);
      assert.ok(
        submitted?.type === 'Submitted' &&
          submitted.notBefore !== null &&
          submitted.deadline !== null &&
          Object.keys(submitted.metadata).length === 3,
      );
      assert.ok(events.some((e) => e.type === 'Closed' && e.outcome === 'succeeded' && e.result !== null));
      assert.ok(events.some((e) => e.type === 'Closed' && e.outcome === 'failed' && e.result === null && e.error === 'gave up'));
      assert.ok(events.some((e) => e.type === 'Yielded' && e.kind === 'retry' && e.error !== null && e.notBefore !== null));
      assert.ok(events.some((e) => e.type === 'Yielded' && e.kind === 'defer' && e.error === null && e.notBefore === null));
      assert.ok(events.some((e) => e.type === 'CancelRequested' && e.reason === 'no longer needed'));
      assert.ok(events.some((e) => e.type === 'CancelRequested' && e.reason === null));
      assert.ok(events.some((e) => e.type === 'EntriesPruned' && e.entryIds.length > 0));
    },
  );
});
