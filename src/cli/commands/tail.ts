/** `runlog tail`: follow the log's events as they are appended (reads only; also a live log). */
import { decodeEvent } from '../../events/codec.ts';
import { matchesFilter } from '../../events/event-filter.ts';
import { EXIT_OK, type Command } from '../command.ts';
import { SELECTION_OPTIONS, checkFromSyntax, filterOf, planOf, printEvent } from '../event-selection.ts';
import { followLog } from '../follow.ts';
import { JSON_OPTION, LOG_OPTIONS, integerOption, logConfigOf } from '../options.ts';

export const tail: Command = {
  name: 'tail',
  summary: 'follow events as they are appended, decoded, one a line (reads only; also a live log)',
  usage: '',
  positionals: { min: 0, max: 0 },
  options: {
    ...LOG_OPTIONS,
    ...SELECTION_OPTIONS,
    from: {
      type: 'string',
      value: 'WHERE',
      help: 'start | end (default) | OFFSET (with --partition) | 0 | one offset per partition a,b,... (an event stream id)',
    },
    limit: { type: 'string', value: 'N', help: 'stop after N events (default: follow until interrupted)' },
    'poll-ms': { type: 'string', value: 'MS', help: 'file log: look for new records every MS ms (default 200)' },
    ...JSON_OPTION,
  },
  details: 'Ends on SIGINT/SIGTERM (exit 0). Human output: time, p<partition>@<offset>, event type, tenant/thread entry, fields.',
  async run({ values, io }) {
    const config = logConfigOf(values);
    const filter = filterOf(values);
    const limit = integerOption(values, 'limit', 1);
    const pollMs = integerOption(values, 'poll-ms', 1, 60_000) ?? 200;
    integerOption(values, 'partition', 0);
    checkFromSyntax(values);
    let printed = 0;
    for await (const { partition, record } of followLog(config, io, (log) => planOf(values, log, 'end'), pollMs)) {
      if (record.value === null) continue;
      const event = decodeEvent(record.value);
      if (!matchesFilter(event, filter)) continue;
      await printEvent(io, values, event, partition, record.offset);
      if (++printed === limit) break;
    }
    return EXIT_OK;
  },
};
