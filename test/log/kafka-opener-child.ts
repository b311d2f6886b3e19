/**
 * Child process of kafka-openers.kafka.test.ts: one of two writers racing to open the same
 * topic. It answers one JSON line per command read from stdin:
 *   {"op":"open","topic":T,"partitions":N}  opens the Kafka log and claims every partition,
 *                                           as a RunQueue does when it opens
 *   {"op":"append","appends":K}             appends K records, one after the other, to every
 *                                           partition (partitions concurrently); answers each
 *                                           append's outcome: "ok" or the error's code
 *   {"op":"close"}                          closes the log
 */
import { createInterface } from 'node:readline';
import { isRunlogError } from '../../src/errors.ts';
import { openKafkaLog, type KafkaEventLog } from '../../src/log/kafka/kafka-log.ts';

const name = process.argv[2]!;
const brokers = process.env.KAFKA_BROKERS!.split(',');
let log: KafkaEventLog | null = null;

type Command = { op: 'open'; topic: string; partitions: number } | { op: 'append'; appends: number } | { op: 'close' };

async function appendAll(appends: number): Promise<{ outcomes: string[][]; acknowledged: string[] }> {
  const acknowledged: string[] = [];
  const outcomes = await Promise.all(
    Array.from({ length: log!.partitions }, async (_, p) => {
      const outcome: string[] = [];
      for (let i = 0; i < appends; i++) {
        const key = `${name}-p${p}-${i}`;
        try {
          await log!.append(p, [{ key, value: new TextEncoder().encode(key) }]);
          acknowledged.push(key);
          outcome.push('ok');
        } catch (error) {
          outcome.push(isRunlogError(error) ? error.code : String(error));
        }
      }
      return outcome;
    }),
  );
  return { outcomes, acknowledged };
}

async function run(command: Command): Promise<unknown> {
  switch (command.op) {
    case 'open':
      log = await openKafkaLog({ brokers, topic: command.topic, partitions: command.partitions });
      await Promise.all(Array.from({ length: command.partitions }, (_, p) => log!.claim(p)));
      return { opened: true };
    case 'append':
      return appendAll(command.appends);
    case 'close':
      await log?.close();
      log = null;
      return { closed: true };
  }
}

for await (const line of createInterface({ input: process.stdin })) {
  const answer = await run(JSON.parse(line) as Command).catch((error: unknown) => ({ error: String(error) }));
  process.stdout.write(`${JSON.stringify(answer)}\n`);
}
