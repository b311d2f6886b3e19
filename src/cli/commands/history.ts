/** `runlog history <tenant> <entryId>`: an entry's audit trail, from the log. */
import { eventJson } from '../../events/event-json.ts';
import { EXIT_OK, type Command } from '../command.ts';
import { entryHistory, formatHistoryItem } from '../history.ts';
import { JSON_OPTION, LOG_OPTIONS, flag, logConfigOf } from '../options.ts';
import { writeJson, writeLine } from '../output.ts';
import { withReadLog } from '../read-log.ts';

export const history: Command = {
  name: 'history',
  summary: 'print every event of one entry from the log, in log order (reads only; also a live log)',
  usage: '<tenant> <entryId>',
  positionals: { min: 2, max: 2 },
  options: { ...LOG_OPTIONS, ...JSON_OPTION },
  details: 'Human output: time, @offset, event type, what the event says. --json: one event a line (JSON Lines).',
  async run({ values, positionals: [tenant, entryId], io }) {
    return withReadLog(logConfigOf(values), io, async (log) => {
      const items = await entryHistory(log, tenant!, entryId!);
      if (flag(values, 'json')) {
        for (const { partition, offset, event } of items) await writeJson(io.stdout, eventJson(event, partition, offset));
      } else if (items.length === 0) {
        await writeLine(io.stdout, `no events of ticket ${entryId} for tenant ${tenant} (pruned and compacted away, or another tenant's)`);
      } else {
        for (const item of items) await writeLine(io.stdout, formatHistoryItem(item));
      }
      return EXIT_OK;
    });
  },
};
