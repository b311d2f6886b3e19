/** `runlog export`: the log's events, decoded, as JSON Lines or an Avro container file (reads only; also a live log). */
import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { rm } from 'node:fs/promises';
import { createEventContainer } from '../../events/avro-container.ts';
import { eventOfRecord } from '../../events/record-event.ts';
import { eventJson } from '../../events/event-json.ts';
import { matchesFilter } from '../../events/event-filter.ts';
import type { RunlogEvent } from '../../events/types.ts';
import { RunlogError } from '../../errors.ts';
import { EXIT_OK, UsageError, type CliIo, type Command } from '../command.ts';
import { SELECTION_OPTIONS, checkFromSyntax, filterOf, planOf } from '../event-selection.ts';
import { LOG_OPTIONS, integerOption, logConfigOf, textOption } from '../options.ts';
import { writeJson } from '../output.ts';
import { progressBar } from '../progress.ts';
import { withReadLog } from '../read-log.ts';

export const exportCommand: Command = {
  name: 'export',
  summary:
    'write the events of the log, decoded, up to its end when opened: JSON Lines, or an Avro container file (reads only; also a live log)',
  usage: '',
  positionals: { min: 0, max: 0 },
  stopsOnSignal: true,
  options: {
    ...LOG_OPTIONS,
    ...SELECTION_OPTIONS,
    from: {
      type: 'string',
      value: 'WHERE',
      help: 'start (default) | OFFSET (with --partition) | 0 | one offset per partition a,b,... (an event stream id)',
    },
    format: { type: 'string', value: 'jsonl|avro', help: 'jsonl (default): JSON Lines; avro: an Avro object container file (needs --out)' },
    out: { type: 'string', value: 'FILE', help: 'write to FILE (created; refused if it exists) instead of stdout' },
    json: { type: 'boolean', help: "JSON Lines (the default format; accepted like every command's --json)" },
  },
  details: `jsonl: each line the decoded event, bytes as base64, times as epoch ms, plus partition and offset (a
TicketKeyCreated's key left out). avro: the events whole, the file's schema the union of every event type's
newest schema (schemas/), deflate blocks. Partitions one after another, each in offset order. On a terminal,
stderr shows a progress bar with an ETA (records read of the records to the log's end); elsewhere nothing.`,
  async run({ values, io }) {
    const config = logConfigOf(values);
    const filter = filterOf(values);
    integerOption(values, 'partition', 0);
    checkFromSyntax(values);
    const out = textOption(values, 'out');
    const format = textOption(values, 'format') ?? 'jsonl';
    if (format !== 'jsonl' && format !== 'avro') throw new UsageError(`--format must be jsonl or avro, got ${JSON.stringify(format)}`);
    if (format === 'avro' && out === undefined) throw new UsageError('--format avro writes a file: give --out FILE');
    if (format === 'avro' && values.json === true) throw new UsageError('--json and --format avro: give one');
    return withReadLog(config, io, async (log) => {
      const { partitions, from } = await planOf(values, log, 'start');
      const ends = await Promise.all(partitions.map((p) => log.endOffset(p)));
      const total = ends.reduce((sum, end, i) => sum + Math.max(0, Number(end - from[i]!)), 0);
      const progress = progressBar(io.stderr, total, 'records');
      const sink = closedOnce(await outputError(out, () => (format === 'avro' ? createEventContainer(out!) : jsonLines(io, out))));
      // A failed export (a damaged frame met mid-read: a sealed segment is CRC-checked when read, not at
      // open; a write that failed, the disk full or the file too large; a signal) removes the file it
      // created (flags wx): left, it would read as a whole, shorter export. Whole only once closed: the
      // close writes what was buffered, and may fail too.
      let whole = false;
      try {
        for (const [i, partition] of partitions.entries()) {
          // Up to the end the log had when opened (a live Kafka log grows meanwhile: those come next time).
          for await (const record of log.read(partition, from[i]!)) {
            if (record.offset >= ends[i]!) break;
            if (io.signal.aborted) throw stopped(out);
            progress.advance();
            if (record.value === null) continue;
            const event = eventOfRecord(record.value, partition, record.offset);
            if (matchesFilter(event, filter)) await sink.write(event, partition, record.offset);
          }
        }
        await sink.close();
        whole = true;
      } finally {
        if (!whole) {
          await sink.close().catch(() => undefined);
          if (out !== undefined) await rm(out, { force: true });
        }
      }
      progress.finish();
      return EXIT_OK;
    });
  },
};

/** `open`'s sink; a file --out names that cannot be created is a usage error naming it and why, not a raw EEXIST. */
async function outputError<T>(out: string | undefined, open: () => Promise<T>): Promise<T> {
  try {
    return await open();
  } catch (error) {
    const why = out === undefined ? undefined : OUT_FAILURES[(error as NodeJS.ErrnoException).code ?? ''];
    if (why === undefined) throw error;
    throw new UsageError(`--out ${JSON.stringify(out)} ${why}`);
  }
}

const OUT_FAILURES: Readonly<Record<string, string>> = {
  EEXIST: 'exists already (export never overwrites a file)',
  EISDIR: 'is a directory',
  ENOENT: 'lies in a directory that does not exist',
  ENOTDIR: 'lies under a file, not a directory',
  EACCES: 'cannot be created there (permission denied)',
  EPERM: 'cannot be created there (not permitted)',
  EROFS: 'lies on a read-only file system',
};

interface Sink {
  write(event: RunlogEvent, partition: number, offset: bigint): Promise<void>;
  close(): Promise<void>;
}

/** `sink`, its close made once (a close that failed is not tried again: its failure answers). */
function closedOnce(sink: Sink): Sink {
  let closed: Promise<void> | undefined;
  return { write: (event, partition, offset) => sink.write(event, partition, offset), close: () => (closed ??= sink.close()) };
}

/** The export ended by SIGINT or SIGTERM (runlog.ts) before the log's end. */
function stopped(out: string | undefined): RunlogError {
  const file = out === undefined ? '' : `: ${out} removed`;
  return new RunlogError('Stopped', `export stopped by a signal before the log's end${file}`);
}

async function jsonLines(io: CliIo, out: string | undefined): Promise<Sink> {
  if (out === undefined)
    return { write: (event, partition, offset) => writeJson(io.stdout, eventJson(event, partition, offset)), close: async () => {} };
  const stream = createWriteStream(out, { flags: 'wx' });
  await once(stream, 'open');
  // A write that fails (EFBIG, ENOSPC) is an 'error' event after write() returned: heard here (unheard, it
  // crashed the process, the partial file left), it fails the next write (output.ts write) or the close.
  stream.on('error', () => undefined);
  return {
    write: (event, partition, offset) => writeJson(stream, eventJson(event, partition, offset)),
    close: () =>
      new Promise<void>((resolve, reject) => {
        if (stream.errored) return reject(stream.errored);
        stream.end((error?: Error | null) => (error ? reject(error) : resolve()));
      }),
  };
}
