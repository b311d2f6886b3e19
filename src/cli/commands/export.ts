/** `runlog export`: the log's events, decoded, as JSON Lines (reads only; also a live log). */
import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import type { Writable } from 'node:stream';
import { decodeEvent } from '../../events/codec.ts';
import { eventJson } from '../../events/event-json.ts';
import { matchesFilter } from '../../events/event-filter.ts';
import { EXIT_OK, type Command } from '../command.ts';
import { SELECTION_OPTIONS, checkFromSyntax, filterOf, planOf } from '../event-selection.ts';
import { LOG_OPTIONS, integerOption, logConfigOf, textOption } from '../options.ts';
import { writeJson } from '../output.ts';
import { withReadLog } from '../read-log.ts';

export const exportCommand: Command = {
  name: 'export',
  summary: 'write the events of the log, decoded, as JSON Lines, up to its end when opened (reads only; also a live log)',
  usage: '',
  positionals: { min: 0, max: 0 },
  options: {
    ...LOG_OPTIONS,
    ...SELECTION_OPTIONS,
    from: {
      type: 'string',
      value: 'WHERE',
      help: 'start (default) | OFFSET (with --partition) | 0 | one offset per partition a,b,... (an event stream id)',
    },
    out: { type: 'string', value: 'FILE', help: 'write to FILE (created; refused if it exists) instead of stdout' },
    json: { type: 'boolean', help: "JSON Lines (what export always writes; accepted like every command's --json)" },
  },
  details:
    'Each line: the decoded event, bytes as base64, times as epoch ms, plus partition and offset; partitions one after another, each in offset order.',
  async run({ values, io }) {
    const config = logConfigOf(values);
    const filter = filterOf(values);
    integerOption(values, 'partition', 0);
    checkFromSyntax(values);
    const out = textOption(values, 'out');
    return withReadLog(config, io, async (log) => {
      const { partitions, from } = await planOf(values, log, 'start');
      const sink: Writable = out === undefined ? io.stdout : createWriteStream(out, { flags: 'wx' });
      if (out !== undefined) await once(sink, 'open');
      try {
        for (const [i, partition] of partitions.entries()) {
          for await (const record of log.read(partition, from[i]!)) {
            if (record.value === null) continue;
            const event = decodeEvent(record.value);
            if (matchesFilter(event, filter)) await writeJson(sink, eventJson(event, partition, record.offset));
          }
        }
      } finally {
        if (out !== undefined) await new Promise((resolve) => sink.end(resolve));
      }
      return EXIT_OK;
    });
  },
};
