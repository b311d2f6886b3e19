/** `runlog tail`: follow the log's events as they are appended (reads only; also a live log). */
import { eventOfRecord } from '../../events/record-event.ts';
import { matchesFilter } from '../../events/event-filter.ts';
import { EXIT_OK, UsageError, type Command, type OptionValues } from '../command.ts';
import { SELECTION_OPTIONS, checkFromSyntax, filterOf, planOf, printEvent } from '../event-selection.ts';
import { EVENT_TYPES, type EventType } from '../../events/types.ts';
import type { EventLog } from '../../log/event-log.ts';
import { AgentFilter } from '../agent-filter.ts';
import { followLog, type FollowPlan } from '../follow.ts';
import { JSON_OPTION, LOG_OPTIONS, integerOption, listOption, logConfigOf, textOption } from '../options.ts';

export const tail: Command = {
  name: 'tail',
  summary: 'follow events as they are appended, decoded, one a line (reads only; also a live log)',
  stopsOnSignal: true,
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
    type: {
      type: 'string',
      multiple: true,
      value: 'TYPE',
      help: 'only events of this type (Submitted, Leased, AttemptStarted, Yielded, Closed, ...)',
    },
    agent: {
      type: 'string',
      value: 'AGENT',
      help: "only events of this agent's entries (reads the log before --from first, to learn them)",
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
    const types = typesOf(values);
    const agentName = textOption(values, 'agent');
    const agent = agentName === undefined ? null : new AgentFilter(agentName);
    const plan = async (log: EventLog): Promise<FollowPlan> => {
      const planned = await planOf(values, log, 'end');
      await agent?.learnBefore(log, planned);
      return planned;
    };
    let printed = 0;
    for await (const { partition, record } of followLog(config, io, plan, pollMs)) {
      if (record.value === null) continue;
      const event = eventOfRecord(record.value, partition, record.offset);
      if (!matchesFilter(event, filter) || (agent !== null && !agent.matches(event))) continue;
      if (types !== null && !types.has(event.type)) continue;
      await printEvent(io, values, event, partition, record.offset);
      if (++printed === limit) break;
    }
    return EXIT_OK;
  },
};

/** --type, repeatable: the event types to show (null: every type). */
function typesOf(values: OptionValues): Set<EventType> | null {
  const types = listOption(values, 'type');
  for (const type of types)
    if (!(EVENT_TYPES as readonly string[]).includes(type))
      throw new UsageError(`--type must be an event type (${EVENT_TYPES.join(', ')}), got ${JSON.stringify(type)}`);
  return types.length === 0 ? null : new Set(types as EventType[]);
}
