/**
 * Interop: a producer that is not runlog submits and cancels through the commands topic. A small
 * Java program (test/interop/, ProduceCommands: Apache Kafka's own client and Apache Avro, schemas
 * read from schemas/commands/) writes SubmitCommand / CancelCommand records to `<topic>.commands`
 * inside a Kafka transaction, beside an "order" record to `<topic>.orders`, and commits or aborts.
 *
 * Needs a broker, java and mvn: `node test/run-tests.mjs java-producer` (starts a broker), or
 * `KAFKA_BROKERS=host:port node --import tsx --test test/interop/java-producer.kafka.test.ts`.
 * The Java part is built by maven-build.ts when its sources changed.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decodeCommand } from '../../src/events/command-codec.ts';
import type { Submitted } from '../../src/events/types.ts';
import { partitionOf, threadKeyBytes } from '../../src/log/partitioner.ts';
import { uniqueTopic } from '../log/kafka-test-support.ts';
import { answered, answersOf, readEvents, startOwner, threadPerPartition } from './command-owner.ts';
import { READ_TIMEOUT_MS, readRecords, type TopicRecord } from './kafka-records.ts';
import { at, base64, cancelJson, commandsOf, javaProducer, submitJson, type CommandJson } from './java-producer.ts';

const PARTITIONS = 4;

/** A submit with every optional field set, as the Java program takes it and as runlog reads it. */
function fullSubmit(requestId: string, now: number): { json: CommandJson; fields: Omit<Submitted, 'type' | 'entryId' | 'at' | 'seq'> } {
  const input = new Uint8Array([0, 0xff, 0xc3, 0x01]);
  const values = {
    key: 'idem-1',
    strategy: 'reject' as const,
    priority: -3,
    notBefore: now + 3_600_000,
    deadline: now + 7_200_000,
    maxAttempts: 4,
    metadata: { source: 'java', ünï: 'cödé ✓' },
  };
  return {
    json: submitJson(requestId, 'tenant ü', 'thread ✓', '', { ...values, input: base64(input) }),
    fields: { tenant: 'tenant ü', thread: 'thread ✓', agent: 'build', input, ...values },
  };
}

describe('Java producer (Apache Kafka client + Avro) writing runlog commands in its own transactions', () => {
  it(
    'committed commands are read_committed, decode to the commands written and lie in runlog partitions; aborted ones are written but invisible',
    { timeout: 10 * 60_000 },
    async (t) => {
      const producer = await javaProducer(t, { topic: uniqueTopic('runlog-java-producer'), commandsPartitions: PARTITIONS });
      const threads = ['t-1', 't-2', 't-3', 't-4', 't-5', 'ünï ✓ 7'];
      const full = fullSubmit('commit-full', Date.now());

      const abortedCommands = threads.map((thread, i) => submitJson(`abort-${i}`, 'acme', thread, 'aborted'));
      const aborted = await producer.produce('abort', abortedCommands, 'order aborted');
      const committedCommands: CommandJson[] = [
        ...threads.map((thread, i) => submitJson(`commit-${i}`, 'acme', thread, 'committed')),
        full.json,
        cancelJson('commit-cancel', 'acme', 't-2', '0-abc', 'not needed'),
        cancelJson('commit-cancel-bare', 'acme', 't-3', '1-xyz'),
      ];
      const committed = await producer.produce('commit', committedCommands, 'order committed');

      // Kafka's default partitioner, in Java, put every command where runlog's partitionOf says.
      const sentById = new Map([...commandsOf(aborted), ...commandsOf(committed)].map((s) => [s.requestId, s]));
      for (const c of [...abortedCommands, ...committedCommands]) {
        const s = sentById.get(c.requestId)!;
        assert.equal(s.topic, `${producer.topic}.commands`);
        assert.equal(s.partition, partitionOf(c.tenant, c.thread, PARTITIONS), `${c.requestId}: partition`);
      }
      assert.ok(new Set(commandsOf(committed).map((s) => s.partition)).size > 1, 'every command went to one partition');

      // Each aborted record lies below a committed one of its partition, so a read_committed
      // reader that reached the committed ones has passed it.
      for (const s of commandsOf(aborted)) {
        assert.ok(
          commandsOf(committed).some((c) => c.partition === s.partition && c.offset > s.offset),
          `${at(s)}: nothing after it`,
        );
      }
      const reach = (wanted: Set<string>) => (records: readonly TopicRecord[]) =>
        [...wanted].every((o) => records.some((r) => at(r) === o));
      const everything = new Set([...commandsOf(aborted), ...commandsOf(committed)].map(at));
      const all = await readRecords(`${producer.topic}.commands`, {
        readUncommitted: true,
        until: reach(everything),
        timeoutMs: READ_TIMEOUT_MS,
      });
      assert.deepEqual(all.map(at).sort(), [...everything].sort(), 'read_uncommitted: every record sent, aborted ones too');
      const wanted = new Set(commandsOf(committed).map(at));
      const visible = await readRecords(`${producer.topic}.commands`, {
        readUncommitted: false,
        until: reach(wanted),
        timeoutMs: READ_TIMEOUT_MS,
      });
      assert.deepEqual(visible.map(at).sort(), [...wanted].sort(), 'read_committed: exactly the committed commands');

      // runlog's codec reads each value as the command written (absent fields: the schema's defaults).
      const byPlace = new Map(visible.map((r) => [at(r), r]));
      const expected = new Map<string, unknown>([
        ...threads.map((thread, i): [string, unknown] => [
          `commit-${i}`,
          {
            ...defaults,
            type: 'SubmitCommand',
            requestId: `commit-${i}`,
            tenant: 'acme',
            thread,
            agent: 'build',
            input: bytes('committed'),
          },
        ]),
        ['commit-full', { type: 'SubmitCommand', requestId: 'commit-full', ...full.fields }],
        [
          'commit-cancel',
          { type: 'CancelCommand', requestId: 'commit-cancel', tenant: 'acme', thread: 't-2', entryId: '0-abc', reason: 'not needed' },
        ],
        [
          'commit-cancel-bare',
          { type: 'CancelCommand', requestId: 'commit-cancel-bare', tenant: 'acme', thread: 't-3', entryId: '1-xyz', reason: null },
        ],
      ]);
      for (const c of committedCommands) {
        const record = byPlace.get(at(sentById.get(c.requestId)!))!;
        assert.deepEqual(new Uint8Array(record.key!), threadKeyBytes(c.tenant, c.thread), `${c.requestId}: record key`);
        assert.deepStrictEqual(decodeCommand(new Uint8Array(record.value!)), expected.get(c.requestId), `${c.requestId}: decoded`);
      }

      const orders = await readRecords(`${producer.topic}.orders`, {
        readUncommitted: false,
        until: (records) => records.some((r) => r.offset > BigInt(aborted.sent[0]!.offset)),
        timeoutMs: READ_TIMEOUT_MS,
      });
      assert.deepEqual(
        orders.map((r) => r.value?.toString()),
        ['order committed'],
        "the order record shares its transaction's fate",
      );
    },
  );
});

const defaults = { key: null, strategy: null, priority: null, notBefore: null, deadline: null, maxAttempts: null, metadata: {} };

function bytes(text: string): Uint8Array {
  return new Uint8Array(Buffer.from(text));
}

describe('a runlog owner serving the commands a Java producer wrote in its own transactions', () => {
  it(
    'a committed transaction submits each command exactly once, an aborted one nothing; a repeated request id answers the same ticket',
    { timeout: 10 * 60_000 },
    async (t) => {
      const topic = uniqueTopic('runlog-java-owner');
      await startOwner(t, topic, PARTITIONS);
      const producer = await javaProducer(t, { topic });
      const threads = threadPerPartition('acme', 'order', PARTITIONS);
      const full = fullSubmit('s-full', Date.now());

      // 1. Committed: a submit in every partition, and one with every field set.
      const first = [...threads.map((thread, i) => submitJson(`s-${i}`, 'acme', thread, `first ${i}`)), full.json];
      await producer.produce('commit', first, 'order 1');
      const firstAnswers = answersOf(await readEvents(topic, answered(Object.fromEntries(first.map((c) => [c.requestId, 1])))));
      const entryOf = (requestId: string): string => firstAnswers.get(requestId)![0]!.entryId!;

      // 2. Aborted: a submit in every partition, a cancel of s-0's entry, s-1's request id again.
      const abortedIds = [...threads.map((_, i) => `a-${i}`), 'a-cancel'];
      await producer.produce(
        'abort',
        [
          ...threads.map((thread, i) => submitJson(`a-${i}`, 'acme', thread, 'aborted')),
          cancelJson('a-cancel', 'acme', threads[0]!, entryOf('s-0'), 'aborted'),
          submitJson('s-1', 'acme', threads[1]!, 'aborted'),
        ],
        'order 2',
      );

      // 3. Committed: s-0's request id again, a cancel of s-1's entry, a new submit in every
      // partition, and n-0 twice in this one transaction. Each partition's last command is an
      // n-*: once they are answered, the owner (reading each partition in order) has passed
      // every command before them, the aborted ones included.
      await producer.produce(
        'commit',
        [
          submitJson('s-0', 'acme', threads[0]!, 'second try'),
          cancelJson('c-1', 'acme', threads[1]!, entryOf('s-1'), 'not needed'),
          ...threads.map((thread, i) => submitJson(`n-${i}`, 'acme', thread, `third ${i}`)),
          submitJson('n-0', 'acme', threads[0]!, 'n-0 again'),
        ],
        'order 3',
      );
      const expected: Record<string, number> = { 's-full': 1, 'c-1': 1 };
      for (let i = 0; i < PARTITIONS; i++) Object.assign(expected, { [`s-${i}`]: i === 0 ? 2 : 1, [`n-${i}`]: i === 0 ? 2 : 1 });
      const events = await readEvents(topic, answered(expected));
      const answers = answersOf(events);
      t.diagnostic(`${events.length} events read, ${[...answers.values()].flat().length} answers`);

      // Every committed command answered exactly as often as it was written; no aborted one.
      assert.deepEqual(Object.fromEntries([...answers].map(([id, list]) => [id, list.length])), expected, 'answers per request id');
      for (const id of abortedIds) assert.equal(answers.get(id), undefined, `${id} (aborted) was answered`);

      // Each submit request: one entry, created by its first answer; a repeat answers the same ticket.
      const submitted = events.filter((e): e is Submitted => e.type === 'Submitted');
      for (const [id, list] of answers) {
        if (id === 'c-1') continue;
        const ticket = list[0]!.entryId;
        assert.deepEqual(
          list.map((a) => [a.command, a.created, a.code, a.entryId]),
          list.map((_, k) => ['submit', k === 0, null, ticket]),
          `${id}: its answers`,
        );
        assert.equal(submitted.filter((e) => e.entryId === ticket).length, 1, `${id}: Submitted events of its entry`);
      }
      assert.equal(submitted.length, answers.size - 1, 'Submitted events: one per submit request id, nothing else');
      const inputOf = (id: string) => Buffer.from(submitted.find((e) => e.entryId === answers.get(id)![0]!.entryId)!.input).toString();
      for (let i = 0; i < PARTITIONS; i++) {
        assert.deepEqual([inputOf(`s-${i}`), inputOf(`n-${i}`)], [`first ${i}`, `third ${i}`], `${threads[i]}: the first write of each id`);
      }
      const { type, entryId, at: stamped, seq, ...fields } = submitted.find((e) => e.entryId === entryOf('s-full'))!;
      assert.ok(type === 'Submitted' && entryId !== '' && stamped > 0 && seq >= 0);
      assert.deepStrictEqual(fields, full.fields, 's-full: every field as the Java producer wrote it');

      // The committed cancel cancelled s-1's entry; the aborted one left s-0's alone.
      assert.deepEqual(
        answers.get('c-1')!.map((a) => [a.command, a.created, a.code, a.entryId]),
        [['cancel', true, null, entryOf('s-1')]],
      );
      const cancels = events.flatMap((e) => (e.type === 'CancelRequested' ? [[e.entryId, e.reason]] : []));
      assert.deepEqual(cancels, [[entryOf('s-1'), 'not needed']], 'CancelRequested events');

      const orders = await readRecords(`${topic}.orders`, {
        readUncommitted: false,
        until: (r) => r.length >= 2,
        timeoutMs: READ_TIMEOUT_MS,
      });
      assert.deepEqual(
        orders.map((r) => r.value?.toString()),
        ['order 1', 'order 3'],
        'the orders committed with the commands',
      );
    },
  );
});
