/**
 * `runlog migrate`: copies an embedded file log into a new Kafka topic of as many partitions,
 * record for record (keys, event bytes and tombstones, each partition in offset order), so
 * every entry, its id and its state carry over, and a server (or a cluster) on the topic
 * serves exactly what the file log's server did.
 *
 * The file log is opened to write, which takes its lock: a server still running on it makes
 * the copy refuse (Locked) rather than miss what it appends meanwhile. The topic must be new
 * or empty, with the file log's partition count (an entry id names its partition). Each
 * partition is claimed and copied in transactions of at most COPY_BATCH records, then read
 * back and compared with the source. A copy that fails leaves a partial topic: delete it and
 * run again.
 */
import { invalidArgument, RunlogError } from '../../errors.ts';
import type { AppendRecord, EventLog } from '../../log/event-log.ts';
import { openLog, openLogReadOnly } from '../../log/open-log.ts';
import { EXIT_OK, UsageError, type Command } from '../command.ts';
import { JSON_OPTION, flag, textOption } from '../options.ts';
import { writeJson, writeLine } from '../output.ts';

const COPY_BATCH = 500;

export const migrate: Command = {
  name: 'migrate',
  summary: 'copy a file log (its server stopped) into a new Kafka topic of as many partitions, every entry and its id kept',
  usage: '',
  positionals: { min: 0, max: 0 },
  options: {
    dir: { type: 'string', value: 'DIR', help: 'the file log to copy (default ./data); locked while copied: stop its server first' },
    brokers: { type: 'string', value: 'HOST:PORT[,...]', help: 'the Kafka brokers (required)' },
    topic: { type: 'string', value: 'NAME', help: 'the topic to copy into: new or empty (required)' },
    ...JSON_OPTION,
  },
  details: `The topic is created with the file log's partition count (an existing one must have that count and hold
no record). Every record is copied in order, then read back and compared. --json: { partitions: [{ partition,
records }], records }.`,
  async run({ values, io }) {
    const dir = textOption(values, 'dir') ?? './data';
    const brokers = brokerList(textOption(values, 'brokers'));
    const topic = textOption(values, 'topic');
    if (topic === undefined) throw new UsageError('--topic is required: the Kafka topic to copy into');
    const warn = ({ code, message }: { code: string; message: string }) => void io.stderr.write(`runlog: warning ${code}: ${message}\n`);
    const partitions = await partitionsOf(dir);
    const source = await openLog({ kind: 'file', dir }, undefined, warn);
    try {
      const target = await openLog({ kind: 'kafka', brokers, topic }, partitions);
      try {
        await checkEmptyTarget(target, topic, partitions);
        const copied: { partition: number; records: number }[] = [];
        for (let partition = 0; partition < partitions; partition++) {
          copied.push({ partition, records: await copyPartition(source, target, partition) });
          await compare(source, target, partition);
        }
        const records = copied.reduce((sum, { records }) => sum + records, 0);
        if (flag(values, 'json')) await writeJson(io.stdout, { partitions: copied, records });
        else {
          for (const p of copied) await writeLine(io.stdout, `partition ${p.partition}: ${p.records} records copied and compared`);
          await writeLine(io.stdout, `copied ${records} records of ${partitions} partition(s) from ${dir} to topic ${topic}`);
        }
        return EXIT_OK;
      } finally {
        await target.close();
      }
    } finally {
      await source.close();
    }
  },
};

function brokerList(text: string | undefined): string[] {
  if (text === undefined) throw new UsageError('--brokers is required: the Kafka brokers of the topic to copy into');
  const list = text.split(',');
  if (list.some((broker) => !/^[^\s:,]+:\d+$/.test(broker)))
    throw new UsageError(`--brokers must be HOST:PORT[,...], got ${JSON.stringify(text)}`);
  return list;
}

/** The file log's partition count, read without creating anything (a directory without a log is InvalidArgument). */
async function partitionsOf(dir: string): Promise<number> {
  const probe = await openLogReadOnly({ kind: 'file', dir });
  try {
    return probe.partitions;
  } finally {
    await probe.close();
  }
}

/** The topic holds no record yet (its partition count was checked when it opened: the Kafka log never repartitions). */
async function checkEmptyTarget(target: EventLog, topic: string, partitions: number): Promise<void> {
  for (let partition = 0; partition < partitions; partition++) {
    const end = await target.endOffset(partition);
    if (end > 0n)
      throw invalidArgument(
        `topic ${JSON.stringify(topic)} already holds records (partition ${partition} ends at offset ${end}): migrate copies into a new or empty topic only`,
      );
  }
}

/** Copies one partition's records in order, COPY_BATCH a transaction; answers how many. */
async function copyPartition(source: EventLog, target: EventLog, partition: number): Promise<number> {
  await target.claim?.(partition);
  let batch: AppendRecord[] = [];
  let count = 0;
  for await (const { key, value } of source.read(partition, 0n)) {
    batch.push({ key, value: value === null ? null : Uint8Array.from(value) }); // a copy: a read's value may be a view of its buffer
    if (batch.length === COPY_BATCH) {
      await target.append(partition, batch);
      count += batch.length;
      batch = [];
    }
  }
  if (batch.length > 0) await target.append(partition, batch);
  return count + batch.length;
}

/** Reads the partition back from the topic: the same keys and bytes in the same order, or Corrupt. */
async function compare(source: EventLog, target: EventLog, partition: number): Promise<void> {
  const copies = target.read(partition, 0n)[Symbol.asyncIterator]();
  let index = 0;
  for await (const record of source.read(partition, 0n)) {
    const copy = await copies.next();
    if (copy.done || copy.value.key !== record.key || !sameBytes(copy.value.value, record.value))
      throw new RunlogError(
        'Corrupt',
        `partition ${partition}'s record ${index} (offset ${record.offset}) did not read back from the topic as written`,
      );
    index++;
  }
  if (!(await copies.next()).done)
    throw new RunlogError('Corrupt', `partition ${partition} of the topic holds more records than the file log`);
}

function sameBytes(a: Uint8Array | null, b: Uint8Array | null): boolean {
  return a === null || b === null ? a === b : Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(b);
}
