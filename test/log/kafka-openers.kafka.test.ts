/**
 * Two writers opening one topic at once (issue 8, item 11), as two real processes against
 * the real broker, round after round on a fresh topic: both open the topic and claim every
 * partition at the same moment, then each appends to every partition. After any race, every
 * partition must be served by exactly one of them (all its appends acknowledged) while the
 * other is Fenced there (all refused), and readers see exactly the acknowledged appends.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface, type Interface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import type { EventLog } from '../../src/log/event-log.ts';
import { openKafkaLog } from '../../src/log/kafka/kafka-log.ts';
import { deleteTopic, kafkaBrokers, uniqueTopic } from './kafka-test-support.ts';

const ROUNDS = Number(process.env.RUNLOG_OPENER_ROUNDS ?? 20);
const PARTITIONS = 8;
const APPENDS = 3; // per partition, one after the other: both lanes of a partition are used
const VISIBLE_WAIT_MS = 10_000;

/** A child writer (kafka-opener-child.ts), driven one JSON line at a time. */
class Writer {
  readonly #child: ChildProcess;
  readonly #lines: Interface;
  readonly #answers: Array<(line: string) => void> = [];

  constructor(readonly name: string) {
    const script = fileURLToPath(new URL('./kafka-opener-child.ts', import.meta.url));
    this.#child = spawn(process.execPath, ['--import', 'tsx', script, name], { stdio: ['pipe', 'pipe', 'inherit'] });
    this.#lines = createInterface({ input: this.#child.stdout! });
    this.#lines.on('line', (line) => this.#answers.shift()?.(line));
  }

  async ask<T>(command: object): Promise<T> {
    const answer = new Promise<string>((resolve) => this.#answers.push(resolve));
    this.#child.stdin!.write(`${JSON.stringify(command)}\n`);
    const parsed = JSON.parse(await answer) as T & { error?: string };
    if (parsed.error !== undefined) throw new Error(`${this.name}: ${parsed.error}`);
    return parsed;
  }

  stop(): void {
    this.#child.stdin!.end();
  }
}

interface Appended {
  outcomes: string[][];
  acknowledged: string[];
}

/**
 * The keys readers see in `topic`, once they include every acknowledged one: an append is
 * acknowledged once its commit is logged, and readers see it once the commit markers land,
 * a moment later (kafka-log.ts). Waits up to VISIBLE_WAIT_MS for that.
 */
async function visibleKeys(topic: string, acknowledged: readonly string[]): Promise<string[]> {
  const reader = await openKafkaLog({ brokers: kafkaBrokers(), topic, partitions: PARTITIONS });
  try {
    const deadline = Date.now() + VISIBLE_WAIT_MS;
    for (;;) {
      const visible = (await Promise.all(Array.from({ length: PARTITIONS }, (_, p) => keysOf(reader, p)))).flat();
      if (acknowledged.every((key) => visible.includes(key)) || Date.now() > deadline) return visible;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  } finally {
    await reader.close();
  }
}

async function keysOf(log: EventLog, partition: number): Promise<string[]> {
  const keys: string[] = [];
  for await (const record of log.read(partition, 0n)) keys.push(record.key);
  return keys;
}

/** What is wrong with one round's outcome, if anything. */
function problems(a: Appended, b: Appended): string[] {
  const found: string[] = [];
  for (let p = 0; p < PARTITIONS; p++) {
    const [oa, ob] = [a.outcomes[p]!, b.outcomes[p]!];
    const served = (o: string[]): boolean => o.every((x) => x === 'ok');
    const fenced = (o: string[]): boolean => o.every((x) => x === 'Fenced');
    if (!((served(oa) && fenced(ob)) || (fenced(oa) && served(ob)))) found.push(`partition ${p}: A ${oa.join(',')} / B ${ob.join(',')}`);
  }
  return found;
}

describe('Kafka log: two writers opening one topic at once', () => {
  it(`every partition is served by exactly one, the other is Fenced, and nothing acknowledged is lost (${ROUNDS} rounds)`, async (t) => {
    const [a, b] = [new Writer('A'), new Writer('B')];
    t.after(() => {
      a.stop();
      b.stop();
    });
    const failedRounds: string[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const topic = uniqueTopic('runlog-openers');
      try {
        await Promise.all([a, b].map((w) => w.ask({ op: 'open', topic, partitions: PARTITIONS })));
        const [appendedA, appendedB] = await Promise.all([a, b].map((w) => w.ask<Appended>({ op: 'append', appends: APPENDS })));
        await Promise.all([a, b].map((w) => w.ask({ op: 'close' })));
        const wrong = problems(appendedA!, appendedB!);
        const acknowledged = [...appendedA!.acknowledged, ...appendedB!.acknowledged].sort();
        const visible = (await visibleKeys(topic, acknowledged)).sort();
        if (JSON.stringify(visible) !== JSON.stringify(acknowledged))
          wrong.push(`readers see ${visible.join(' ')}; acknowledged: ${acknowledged.join(' ')}`);
        if (wrong.length > 0) failedRounds.push(`round ${round}: ${wrong.join('; ')}`);
      } finally {
        await deleteTopic(topic);
      }
    }
    assert.deepEqual(failedRounds, [], `${failedRounds.length} of ${ROUNDS} rounds went wrong`);
  });
});
