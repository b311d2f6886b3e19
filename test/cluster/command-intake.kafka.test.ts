/**
 * The commands topic on the real broker: a producer that is not runlog (kafkajs's own
 * transactional producer, here in the test) writes SubmitCommand and CancelCommand records
 * keyed tenant + NUL + thread to `<topic>.commands`, inside its own transactions; the command
 * intake of a queue owning the partitions answers them. An aborted transaction submits
 * nothing; a committed one each command exactly once; a repeated request id answers the same
 * ticket; and when a second queue claims the partitions mid-stream (fencing the first, as a
 * node taking over from one that died), every command is still answered exactly once: counted
 * from the events topic (CommandAnswered per request id, Submitted per entry).
 */
import assert from 'node:assert/strict';
import { describe, it, type TestContext } from 'node:test';
import kafkajs from 'kafkajs';
import { CommandIntake } from '../../src/cluster/command-intake.ts';
import { decodeEvent } from '../../src/events/codec.ts';
import { encodeCommand } from '../../src/events/command-codec.ts';
import type { RunlogCommand, SubmitCommand } from '../../src/events/command-types.ts';
import type { CommandAnswered, RunlogEvent } from '../../src/events/types.ts';
import { threadKey } from '../../src/events/keys.ts';
import { openKafkaCommandSource } from '../../src/log/kafka/command-source.ts';
import { openKafkaLog } from '../../src/log/kafka/kafka-log.ts';
import type { EventLog } from '../../src/log/event-log.ts';
import { RunlogError } from '../../src/errors.ts';
import { wrapLog } from '../support/wrap-log.ts';
import { partitionOf } from '../../src/log/partitioner.ts';
import { openRunQueueOnLog } from '../../src/queue/open-run-queue.ts';
import type { RunQueue } from '../../src/queue/run-queue.ts';
import type { RunlogWarning } from '../../src/warnings.ts';
import { deleteTopic, kafkaBrokers, openTestKafkaLog, uniqueTopic } from '../log/kafka-test-support.ts';
import { onCleanup } from '../support/cleanup.ts';

const PARTITIONS = 2;

function submit(requestId: string, thread: string, extra: Partial<SubmitCommand> = {}): SubmitCommand {
  return {
    type: 'SubmitCommand',
    requestId,
    tenant: 'acme',
    thread,
    agent: 'build',
    input: new TextEncoder().encode(requestId),
    key: null,
    strategy: null,
    priority: null,
    notBefore: null,
    deadline: null,
    maxAttempts: null,
    metadata: { source: 'kafkajs' },
    ...extra,
  };
}

/** A node: a queue owning what it acquires, and its intake; stopped after the test. `wrap`: faults around its real log. */
async function openNode(t: TestContext, topic: string, group: string, warnings: RunlogWarning[] = [], wrap = (log: EventLog) => log) {
  const log = wrap(await openKafkaLog({ brokers: kafkaBrokers(), topic, partitions: PARTITIONS }));
  const queue = await openRunQueueOnLog(log, { ownership: 'assigned', onWarning: (w) => warnings.push(w) });
  const source = await openKafkaCommandSource({ brokers: kafkaBrokers(), topic, group, partitions: PARTITIONS });
  const intake = new CommandIntake({ queue, source, onWarning: (w) => warnings.push(w) });
  let stopped = false;
  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    await intake.stopAll();
    await source.close();
    await queue.stop();
  };
  onCleanup(t, stop);
  const own = async (partition: number): Promise<void> => {
    await queue.acquire(partition);
    intake.start(partition);
  };
  return { queue, source, intake, own, stop };
}

/** kafkajs's transactional producer: Kafka's default partitioner (murmur2 of the key) picks the partition. */
async function openProducer(t: TestContext) {
  const kafka = new kafkajs.Kafka({ clientId: 'commands-test', brokers: kafkaBrokers(), logLevel: kafkajs.logLevel.NOTHING });
  const producer = kafka.producer({ transactionalId: `producer-${uniqueTopic('tx')}`, maxInFlightRequests: 1, idempotent: true });
  await producer.connect();
  onCleanup(t, () => producer.disconnect());
  return async (commandsTopic: string, commands: RunlogCommand[], outcome: 'commit' | 'abort'): Promise<void> => {
    const transaction = await producer.transaction();
    const messages = commands.map((command) => ({
      key: Buffer.from(threadKey(command.tenant, command.thread), 'utf8'),
      value: Buffer.from(encodeCommand(command)),
    }));
    await transaction.send({ topic: commandsTopic, messages });
    await (outcome === 'commit' ? transaction.commit() : transaction.abort());
  };
}

/** Every event of the events topic (read_committed), in partition then offset order. */
async function eventsOf(queue: RunQueue): Promise<RunlogEvent[]> {
  const events: RunlogEvent[] = [];
  for (let p = 0; p < PARTITIONS; p++) for await (const r of queue.log.read(p, 0n)) if (r.value !== null) events.push(decodeEvent(r.value));
  return events;
}

function answersOf(events: RunlogEvent[]): CommandAnswered[] {
  return events.filter((e): e is CommandAnswered => e.type === 'CommandAnswered');
}

/** Waits (polling the events topic, which is what a producer would read) until every request id has an answer. */
async function answered(queue: RunQueue, requestIds: readonly string[], timeoutMs = 90_000): Promise<RunlogEvent[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const events = await eventsOf(queue);
    const seen = new Set(answersOf(events).map((a) => a.requestId));
    const missing = requestIds.filter((id) => !seen.has(id));
    if (missing.length === 0) return events;
    if (Date.now() > deadline)
      assert.fail(`no answer after ${timeoutMs} ms for ${missing.length} requests: ${missing.slice(0, 5).join(', ')}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

function countBy<T>(items: readonly T[], key: (item: T) => string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const item of items) counts.set(key(item), (counts.get(key(item)) ?? 0) + 1);
  return counts;
}

describe('the commands topic on the real broker', () => {
  it('aborted transactions submit nothing; committed ones each command exactly once; a repeated request id answers the same ticket', async (t) => {
    const topic = uniqueTopic('runlog-commands');
    const group = `g-${topic}`;
    await openTestKafkaLog(t, PARTITIONS, { topic });
    const node = await openNode(t, topic, group);
    onCleanup(t, () => deleteTopic(node.source.topic));
    await node.own(0);
    await node.own(1);
    const send = await openProducer(t);
    const threads = ['t0', 't1', 't2', 't3'];
    assert.deepEqual(new Set(threads.map((th) => partitionOf('acme', th, PARTITIONS))), new Set([0, 1]), 'both partitions get commands');

    await send(
      node.source.topic,
      threads.map((th) => submit(`aborted-${th}`, th)),
      'abort',
    );
    const committed = threads.map((th) => submit(`ok-${th}`, th));
    await send(node.source.topic, committed, 'commit');
    await send(node.source.topic, [submit('ok-t0', 't0', { agent: 'changed' }), submit('bad', 't1', { agent: '' })], 'commit');
    await send(
      node.source.topic,
      threads.map((th) => submit(`late-aborted-${th}`, th)),
      'abort',
    );
    const last = threads.map((th) => submit(`last-${th}`, th));
    await send(node.source.topic, last, 'commit');

    const events = await answered(node.queue, [...committed, ...last].map((c) => c.requestId).concat('bad'));
    const answers = answersOf(events);
    assert.equal(answers.filter((a) => a.requestId.includes('aborted')).length, 0, 'an aborted transaction was answered');
    assert.equal(events.filter((e) => e.type === 'Submitted' && new TextDecoder().decode(e.input).includes('aborted')).length, 0);
    const perRequest = countBy(answers, (a) => a.requestId);
    for (const c of [...committed.slice(1), ...last]) assert.equal(perRequest.get(c.requestId), 1, c.requestId);
    const [first, repeat] = answers.filter((a) => a.requestId === 'ok-t0');
    assert.ok(first && repeat, 'the repeated request id got its own answer');
    assert.deepEqual([first.created, repeat.created, repeat.entryId], [true, false, first.entryId]);
    assert.equal(answers.find((a) => a.requestId === 'bad')?.code, 'InvalidArgument');
    const submitted = events.filter((e) => e.type === 'Submitted');
    assert.equal(submitted.length, committed.length + last.length, 'one entry per committed submit, none for the repeat');
    assert.ok([...countBy(submitted, (e) => e.entryId).values()].every((n) => n === 1));
    // The offsets committed with the answers: the intake would start after the last command.
    for (let p = 0; p < PARTITIONS; p++) {
      const committedOffset = await node.source.committedOffset(p);
      assert.ok(committedOffset > 0n, `nothing committed on partition ${p}`);
    }
    const entry = await node.queue.entry('acme', first.entryId!);
    assert.equal(entry.agent, 'build', 'the repeat changed nothing');
  });

  it('an append that fails mid-stream: the partition rebuilds and the intake reads again from the committed offset, answering each command once', async (t) => {
    const topic = uniqueTopic('runlog-commands');
    const group = `g-${topic}`;
    await openTestKafkaLog(t, PARTITIONS, { topic });
    const warnings: RunlogWarning[] = [];
    let appends = 0;
    const failing = (log: EventLog): EventLog =>
      wrapLog(log, {
        appendsInFlight: log.appendsInFlight ?? 1,
        commitsConsumedOffsets: true,
        claim: (p: number) => log.claim!(p),
        release: (p: number) => log.release!(p),
        append: (p, records, options) => {
          // The 3rd and 7th appends that commit consumed offsets fail before reaching Kafka (a broker gone for a moment).
          if (options?.consumed !== undefined && [3, 7].includes(++appends)) {
            return Promise.reject(new RunlogError('LogUnavailable', 'the broker went away (injected)', { retriable: true }));
          }
          return log.append(p, records, options);
        },
      });
    const node = await openNode(t, topic, group, warnings, failing);
    onCleanup(t, () => deleteTopic(node.source.topic));
    await node.own(0);
    await node.own(1);
    const send = await openProducer(t);
    const requestIds: string[] = [];
    for (let n = 0; n < 12; n++) {
      const batch = Array.from({ length: 5 }, (_, i) => submit(`f-${n}-${i}`, `t${(n + i) % 5}`));
      await send(node.source.topic, batch, 'commit');
      requestIds.push(...batch.map((c) => c.requestId));
    }
    const events = await answered(node.queue, requestIds);
    const perRequest = countBy(answersOf(events), (a) => a.requestId);
    for (const id of requestIds) assert.equal(perRequest.get(id), 1, `${id} answered ${perRequest.get(id)} times`);
    const submitted = events.filter((e) => e.type === 'Submitted');
    assert.equal(submitted.length, requestIds.length);
    assert.ok(appends >= 7, `only ${appends} appends: the faults were not met`);
    assert.ok(
      warnings.some((w) => w.code === 'RUNLOG_COMMAND_INTAKE'),
      `the intake did not read again: ${warnings.map((w) => w.code).join(', ')}`,
    );
  });

  it(
    'a second queue claiming the partitions mid-stream (fencing the first) goes on from the committed offset: every command answered exactly once',
    { timeout: 240_000 },
    async (t) => {
      const topic = uniqueTopic('runlog-commands');
      const group = `g-${topic}`;
      await openTestKafkaLog(t, PARTITIONS, { topic });
      const warnings: RunlogWarning[] = [];
      const a = await openNode(t, topic, group, warnings);
      onCleanup(t, () => deleteTopic(a.source.topic));
      await a.own(0);
      await a.own(1);
      const send = await openProducer(t);

      const requestIds: string[] = [];
      const TRANSACTIONS = 30;
      const PER_TRANSACTION = 10;
      const takeOverAt = 10;
      const b = await openNode(t, topic, group, warnings);
      let tookOverAfterMs = 0;
      const started = performance.now();
      for (let n = 0; n < TRANSACTIONS; n++) {
        const batch = Array.from({ length: PER_TRANSACTION }, (_, i) => submit(`s-${n}-${i}`, `t${(n * PER_TRANSACTION + i) % 7}`));
        // Every fifth transaction repeats a request id of the one before: it must answer that ticket again.
        if (n > 0 && n % 5 === 0) batch.push(submit(`s-${n - 1}-0`, `t${((n - 1) * PER_TRANSACTION) % 7}`));
        await send(a.source.topic, batch, n % 4 === 3 ? 'abort' : 'commit');
        if (n % 4 !== 3) requestIds.push(...batch.map((c) => c.requestId));
        if (n === takeOverAt) {
          await answered(a.queue, [...new Set(requestIds)]); // the first owner has answered everything so far: the take-over is mid-stream
          tookOverAfterMs = performance.now() - started;
          void Promise.all([b.own(0), b.own(1)]); // claims both: a's appends are fenced from now on
        }
      }
      const expected = [...new Set(requestIds)];
      const events = await answered(b.queue, expected, 180_000);
      t.diagnostic(
        `${expected.length} requests, take-over after ${Math.round(tookOverAfterMs)} ms, all answered after ${Math.round(performance.now() - started)} ms`,
      );

      const answers = answersOf(events);
      assert.equal(answers.filter((a) => !expected.includes(a.requestId)).length, 0, 'a command of an aborted transaction was answered');
      // Each committed command exactly once: a request id committed twice (a repeat) has two answers, naming one ticket.
      const perRequest = countBy(answers, (a) => a.requestId);
      const wanted = countBy(requestIds, (id) => id);
      for (const [id, times] of wanted)
        assert.equal(perRequest.get(id), times, `${id} answered ${perRequest.get(id)} times, committed ${times}`);
      const repeats = [...wanted].filter(([, times]) => times > 1).map(([id]) => id);
      assert.ok(repeats.length > 0, 'no repeated request id was committed');
      for (const id of repeats) {
        const both = answers.filter((a) => a.requestId === id);
        assert.equal(new Set(both.map((a) => a.entryId)).size, 1, `${id}: the repeat answered another ticket`);
        assert.deepEqual(
          both.map((a) => a.created),
          [true, false],
        );
      }
      const submitted = events.filter((e) => e.type === 'Submitted');
      assert.ok(
        [...countBy(submitted, (e) => e.entryId).values()].every((n) => n === 1),
        'an entry was submitted twice',
      );
      assert.equal(submitted.length, answers.filter((a) => a.created).length, 'one Submitted per created answer');
      assert.equal(submitted.length, expected.length, 'one entry per distinct committed request');
      assert.ok(
        (await a.queue.health()).every((h) => h.mode === 'unowned'),
        'the first queue released both partitions once fenced',
      );
    },
  );
});
