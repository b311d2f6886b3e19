/** `runlog history [<tenant>] <ticket>`: an entry's audit trail, from the log. */
import { eventJson } from '../../events/event-json.ts';
import { EXIT_OK, type Command } from '../command.ts';
import { readEntryTrail } from '../entry-trail.ts';
import { JSON_OPTION, LOG_OPTIONS, flag, logConfigOf } from '../options.ts';
import { writeJson, writeLine } from '../output.ts';
import { withReadLog } from '../read-log.ts';
import { trailText } from '../trail-text.ts';

export const history: Command = {
  name: 'history',
  summary:
    "print an entry's audit trail from the log: its submission, why it stands where it does, every event (reads only; also a live log)",
  usage: '[<tenant>] <ticket>',
  positionals: { min: 1, max: 2 },
  options: { ...LOG_OPTIONS, ...JSON_OPTION },
  details: `The ticket (entry id) names its partition; the tenant is found from its events (give it to read only
that tenant's). Human output: every field of the submission (thread, agent, input, key, strategy, priority,
not before, deadline, max attempts, metadata), a one-line why (e.g. closed failed after 10 attempts; last
error "..."), then each event: date, time and zone, @offset, the time since the previous event, type and
fields. A ticket with no events left (pruned and compacted away, or another tenant's) prints a line saying
so, exit 0; one its partition never issued (made up or altered) is TicketNotFound, exit 1. --json: the
events, one a line (JSON Lines), as export writes them.`,
  async run({ values, positionals, io }) {
    const [tenant, entryId] = positionals.length === 2 ? [positionals[0]!, positionals[1]!] : [null, positionals[0]!];
    return withReadLog(logConfigOf(values), io, async (log) => {
      const trail = await readEntryTrail(log, entryId, tenant);
      if (flag(values, 'json')) {
        for (const { partition, offset, event } of trail.items) await writeJson(io.stdout, eventJson(event, partition, offset));
      } else if (trail.items.length === 0) {
        const whose = tenant === null ? '' : ` for tenant ${tenant}`;
        await writeLine(io.stdout, `no events of ticket ${entryId}${whose} (pruned and compacted away, or another tenant's)`);
      } else {
        await writeLine(io.stdout, trailText(trail));
      }
      return EXIT_OK;
    });
  },
};
