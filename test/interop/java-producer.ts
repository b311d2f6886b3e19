/**
 * The Java producer of the interop tests (ProduceCommands, see its javadoc) run as a child
 * process: it writes command records to `<topic>.commands` inside a Kafka transaction beside an
 * order record to `<topic>.orders`, and commits or aborts. Also the commands files it takes.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { deleteTopic, kafkaBrokers } from '../log/kafka-test-support.ts';
import { onCleanup, type AfterHooks } from '../support/cleanup.ts';
import { createTopic } from './kafka-records.ts';
import { ROOT, buildInterop, run } from './maven-build.ts';

const MAIN_CLASS = 'runlog.interop.ProduceCommands';
const COMMAND_SCHEMAS = join(ROOT, 'schemas', 'commands');

/** A command as the commands file holds it: the schema's fields (bytes as base64; absent ones take the schema's default). */
export type CommandJson = { type: 'SubmitCommand' | 'CancelCommand'; requestId: string; tenant: string; thread: string } & Record<
  string,
  unknown
>;

/** One line of the program's output per record sent. */
export interface Sent {
  topic: string;
  partition: number;
  offset: number;
  /** 'order', or the command's type. */
  type: string;
  requestId?: string;
}

export interface Produced {
  /** The order record first, then the commands in the file's order. */
  sent: Sent[];
  outcome: 'committed' | 'aborted';
}

export interface JavaProducer {
  /** The events topic: commands go to `<topic>.commands`, orders to `<topic>.orders`. */
  topic: string;
  produce(mode: 'commit' | 'abort', commands: CommandJson[], order: string): Promise<Produced>;
}

export interface JavaProducerOptions {
  topic: string;
  /** Create `<topic>.commands` with this many partitions (else the runlog owner creates it). */
  commandsPartitions?: number;
}

/** Builds the program, creates `<topic>.orders` (and `<topic>.commands` if asked); both topics are deleted after the test. */
export async function javaProducer(t: AfterHooks, options: JavaProducerOptions): Promise<JavaProducer> {
  const classpath = await buildInterop([MAIN_CLASS], [/^avro-\d.*\.jar$/, /^kafka-clients-\d.*\.jar$/]);
  const { topic } = options;
  const dir = mkdtempSync(join(tmpdir(), 'runlog-java-producer-'));
  onCleanup(t, () => rmSync(dir, { recursive: true, force: true }));
  const topics: [string, number][] = [[`${topic}.orders`, 1]];
  if (options.commandsPartitions !== undefined) topics.push([`${topic}.commands`, options.commandsPartitions]);
  for (const [name, partitions] of topics) {
    await createTopic(name, partitions);
    onCleanup(t, () => deleteTopic(name));
  }
  let runs = 0;
  return {
    topic,
    async produce(mode, commands, order) {
      const file = join(dir, `commands-${++runs}.json`);
      writeFileSync(file, JSON.stringify(commands));
      const args = ['--brokers', kafkaBrokers().join(','), '--topic', topic, '--schemas', COMMAND_SCHEMAS, '--commands', file];
      const result = await run('java', ['-cp', classpath, MAIN_CLASS, ...args, '--mode', mode, '--order', order], 2 * 60_000);
      assert.equal(result.code, 0, `ProduceCommands ${mode} failed (exit ${result.code}):\n${result.stdout}\n${result.stderr}`);
      const lines = result.stdout
        .split('\n')
        .filter((l) => l.trim() !== '')
        .map((l) => JSON.parse(l) as Sent | { outcome: Produced['outcome'] });
      const last = lines.pop();
      assert.ok(last !== undefined && 'outcome' in last, `ProduceCommands printed no outcome:\n${result.stdout}`);
      assert.equal(last.outcome, mode === 'commit' ? 'committed' : 'aborted');
      const sent = lines as Sent[];
      assert.deepEqual(
        sent.map((s) => s.requestId ?? s.type),
        ['order', ...commands.map((c) => c.requestId)],
        'the Java producer did not report every record it sent',
      );
      return { sent, outcome: last.outcome };
    },
  };
}

export function base64(bytes: string | Uint8Array): string {
  return Buffer.from(bytes).toString('base64');
}

export function submitJson(
  requestId: string,
  tenant: string,
  thread: string,
  input: string,
  extra: Record<string, unknown> = {},
): CommandJson {
  return { type: 'SubmitCommand', requestId, tenant, thread, agent: 'build', input: base64(input), ...extra };
}

export function cancelJson(requestId: string, tenant: string, thread: string, entryId: string, reason?: string): CommandJson {
  return { type: 'CancelCommand', requestId, tenant, thread, entryId, ...(reason === undefined ? {} : { reason }) };
}

/** The command records sent (the order left out). */
export function commandsOf(produced: Produced): Sent[] {
  return produced.sent.filter((s) => s.type !== 'order');
}

/** A record's place as `partition@offset`, to compare sets of records. */
export function at(record: { partition: number; offset: number | bigint }): string {
  return `${record.partition}@${record.offset}`;
}
