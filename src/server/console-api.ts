/**
 * The read endpoints the web console needs (src/server/console/), which the queue's API lacks:
 * one entry's history as JSON (GET /v1/tenants/{tenant}/entries/{entryId}/history) and each
 * agent's backlog and rates (GET /v1/agents). Both read the server's log (incrementally: see
 * agent-backlog.ts and entry-starts.ts); both see only the caller's tenants, as the other reads
 * do (another tenant's entry answers as an unknown one).
 */
import { Type, type Static } from '@sinclair/typebox';
import { RunlogError } from '../errors.ts';
import { eventJson, type EventJson } from '../events/event-json.ts';
import type { EventLog } from '../log/event-log.ts';
import { entryTimeline } from '../../projections/timeline.ts';
import { runProjection } from '../projector/run-projection.ts';
import { partitionOfEntryId } from '../queue/entry-id.ts';
import { RunQueue } from '../queue/run-queue.ts';
import type { Entry, RunQueueApi } from '../queue/types.ts';
import { EntryJson, entryToJson } from '../wire/index.ts';
import { AgentBacklog, COUNTS, KEPT_MINUTES, type AgentRow } from './agent-backlog.ts';
import { EntryStarts } from './entry-starts.ts';
import { HttpRefusal } from './http-refusal.ts';
import type { RouteRequest } from './route.ts';
import { inScope, requireVisible } from './scope.ts';

const Count = Type.Integer({ minimum: 0 });
const StoreTime = Type.Number({ description: 'store-clock epoch ms' });

/** A decoded event as the event stream sends it (src/events/event-json.ts), and the time since the entry's previous event. */
const EventJsonSchema = Type.Object(
  { type: Type.String(), partition: Count, offset: Count, sincePreviousMs: Type.Union([Type.Number(), Type.Null()]) },
  {
    additionalProperties: true,
    description:
      "a decoded event: the schema's fields (its store-clock time `at` among them), bytes as base64, plus partition, offset and sincePreviousMs (store-clock ms since the entry's previous event; null for the first)",
  },
);

export const HistoryAnswer = Type.Object({
  entry: Type.Union([EntryJson, Type.Null()], { description: 'the entry now; null once pruned' }),
  events: Type.Array(EventJsonSchema, { description: 'every event about the entry, in log order' }),
});
export type HistoryAnswer = Static<typeof HistoryAnswer>;
type HistoryEventJson = EventJson & { sincePreviousMs: number | null };

export const AgentsQuery = Type.Object(
  {
    tenant: Type.Optional(
      Type.String({ minLength: 1, maxLength: 1024, description: 'only this tenant (default: every tenant the token may see)' }),
    ),
    minutes: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: KEPT_MINUTES,
        description: 'the counts cover the last this many minutes, the current one included (default 5)',
      }),
    ),
  },
  { additionalProperties: false },
);
export type AgentsQuery = Static<typeof AgentsQuery>;

export const DEFAULT_AGENT_MINUTES = 5;

const AgentRowJson = Type.Object({
  agent: Type.String(),
  open: Count,
  running: Count,
  waiting: Count,
  oldestWaitingAt: Type.Union([StoreTime, Type.Null()]),
  ...Object.fromEntries(COUNTS.map((name) => [name, Count])),
});

export const AgentsAnswer = Type.Object({
  now: StoreTime,
  minutes: Count,
  agents: Type.Array(AgentRowJson),
});

/** One entry's events, in log order, and the entry as the queue answers it now (null once pruned). */
export async function history({ queue, log, caller, params }: RouteRequest): Promise<HistoryAnswer> {
  const { tenant, entryId } = params as { tenant: string; entryId: string };
  requireVisible(caller, tenant, entryId);
  const events = requireLog(log);
  // The queue first: an id it never issued is refused before the log is read. A pruned entry
  // (TicketExpired) may still have events until compaction: they are shown if some are the
  // tenant's own; otherwise the queue's refusal stands, which does not say whether the id was
  // pruned or is another tenant's (an EntriesPruned names ids only).
  const entry = await entryOrRefusal(queue.entry(tenant, entryId));
  const found = await eventsOf(events, tenant, entryId, entry instanceof RunlogError ? null : entry.submittedAt);
  if (entry instanceof RunlogError) {
    if (!found.some((event) => event.type !== 'EntriesPruned')) throw entry;
    return { entry: null, events: found };
  }
  return { entry: entryToJson(entry), events: found };
}

const backlogs = new WeakMap<EventLog, AgentBacklog>();

/** Each agent's backlog now and its counts over the last `minutes` minutes, over the caller's tenants. */
export async function agents({ queue, log, caller, query }: RouteRequest<undefined, AgentsQuery>): Promise<Static<typeof AgentsAnswer>> {
  const events = requireLog(log);
  let backlog = backlogs.get(events);
  if (backlog === undefined) backlogs.set(events, (backlog = new AgentBacklog(events)));
  await backlog.catchUp();
  const minutes = query.minutes ?? DEFAULT_AGENT_MINUTES;
  const now = queue.now();
  const visible = (tenant: string): boolean => inScope(caller, tenant) && (query.tenant === undefined || query.tenant === tenant);
  const rows: AgentRow[] = backlog.rows(visible, now, minutes, partitionClock(queue, now));
  return { now, minutes, agents: rows };
}

/**
 * Each partition's time now (a lease and the times of an entry are in it): the queue's, when it
 * runs in this process (a partition stamped by a node whose clock ran ahead leads store time:
 * src/queue/partition-lead.ts); else store time, all a queue behind another API answers.
 */
function partitionClock(queue: RunQueueApi, now: number): (partition: number) => number {
  return queue instanceof RunQueue ? (partition) => queue.partitionNow(partition) : () => now;
}

function requireLog(log: EventLog | undefined): EventLog {
  if (log === undefined) throw new HttpRefusal(404, 'this server reads no log: it was started without one');
  return log;
}

/** The entry, or the TicketExpired the queue answers for a pruned one (any other refusal is thrown). */
async function entryOrRefusal(reading: Promise<Entry>): Promise<Entry | RunlogError> {
  try {
    return await reading;
  } catch (error) {
    if (error instanceof RunlogError && error.code === 'TicketExpired') return error;
    throw error;
  }
}

const starts = new WeakMap<EventLog, EntryStarts>();

/**
 * The entry's timeline (the shipped projection), folded over its partition from shortly before
 * its submission (entry-starts.ts) to the end; a pruned entry's (no submission time known) from
 * the partition's start.
 */
async function eventsOf(log: EventLog, tenant: string, entryId: string, submittedAt: number | null): Promise<HistoryEventJson[]> {
  const partition = partitionOfEntryId(entryId, log.partitions);
  let index = starts.get(log);
  if (index === undefined) starts.set(log, (index = new EntryStarts(log)));
  const from = submittedAt === null ? 0n : await index.startOf(partition, submittedAt);
  const { state } = await runProjection(log, entryTimeline({ tenant, entryId }), { partitions: [partition], from: { offset: from } });
  return state.map((item) => ({ ...eventJson(item.event, item.partition, item.offset), sincePreviousMs: item.sincePreviousMs }));
}
