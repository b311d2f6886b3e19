/**
 * GET /v1/events: Server-Sent Events of the log's events, decoded (WIRE.md "/v1/events").
 *
 * Each message: `id: <position>`, `event: <type>`, `data: <event JSON>` (src/events/
 * event-json.ts: bytes base64, plus partition and offset). The position (src/log/
 * position.ts) is the next offset to read of every partition after this message, so it is
 * all a reader needs to resume: reconnecting with `Last-Event-ID: <id>` (what EventSource
 * sends; it wins over `?from=`) or `?from=<id>` starts each partition right after what that
 * message had seen, and the reader gets exactly the events it had not, none twice.
 *
 * Why that holds: one loop writes every message and advances the position as it reads,
 * partition by partition in offset order (tailAll merges the partitions' tails). Records
 * read but not sent (tombstones, events the filters drop) advance the position too; they
 * would not have been sent after a resumption either. `from=0` reads the whole log; no
 * position at all starts at the end of every partition when the stream opens (live only).
 *
 * The stream follows every partition's tail until the client goes away or the server closes
 * (the request's signal): then every tail is aborted and awaited (tailAll), the ping timer
 * stops, and the response ends. Writes wait for 'drain', so a slow reader holds the tails
 * back rather than the server buffering the log for it.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { once } from 'node:events';
import { Type, type Static } from '@sinclair/typebox';
import { RunlogError } from '../errors.ts';
import { decodeEvent } from '../events/codec.ts';
import { matchesFilter, type EventFilter } from '../events/event-filter.ts';
import { eventJson } from '../events/event-json.ts';
import type { EventLog } from '../log/event-log.ts';
import { endPosition, formatPosition, parsePosition, type Position } from '../log/position.ts';
import { tailAll } from '../log/tail-all.ts';
import { HttpRefusal } from './http-refusal.ts';
import type { RouteRequest } from './route.ts';
import type { Caller } from './types.ts';

export const EVENTS_PING_EVERY_MS = 15_000;

const Filter = Type.String({ minLength: 1, maxLength: 1024 });

export const EventsQuery = Type.Object(
  {
    tenant: Type.Optional(Filter),
    thread: Type.Optional(Filter),
    entry: Type.Optional(Filter),
    from: Type.Optional(Type.String({ minLength: 1, maxLength: 65_536 })),
  },
  { additionalProperties: false },
);
export type EventsQuery = Static<typeof EventsQuery>;

export interface EventStreamOptions {
  log: EventLog;
  filter: EventFilter;
  /** The next offset of every partition; null: the end of every partition now. */
  from: Position | null;
  /** Ends the stream (client gone, server closing). */
  signal: AbortSignal;
  pingEveryMs?: number;
}

/** The route's handler: reads the filters and the position (refusing bad ones before any byte is sent), then streams. */
export async function eventStream(
  { log, caller, query, signal }: RouteRequest<undefined, EventsQuery>,
  response: ServerResponse,
): Promise<void> {
  if (log === undefined) throw new HttpRefusal(404, 'this server has no event stream: it was started without its log');
  const filter = scopedFilter(caller, query);
  const from = positionOf(response.req, query, log.partitions);
  await streamEvents(response, { log, filter, from, signal });
}

/** The filters asked for, within the caller's tenants: a scoped caller must name one of its tenants. */
export function scopedFilter(caller: Caller, query: EventsQuery): EventFilter {
  const filter: EventFilter = {};
  if (query.tenant !== undefined) filter.tenant = query.tenant;
  if (query.thread !== undefined) filter.thread = query.thread;
  if (query.entry !== undefined) filter.entry = query.entry;
  if (caller.tenants === 'all') return filter;
  if (filter.tenant === undefined) {
    throw new RunlogError('InvalidArgument', `query.tenant is required: ${caller.name} may read the events of its tenants only`);
  }
  if (!caller.tenants.has(filter.tenant)) {
    throw new RunlogError('Forbidden', `${caller.name} may not read the events of tenant ${JSON.stringify(filter.tenant)}`);
  }
  return filter;
}

/** Where to start: Last-Event-ID (a reconnecting EventSource), else ?from, else null (the end). */
export function positionOf(request: IncomingMessage, query: EventsQuery, partitions: number): Position | null {
  const lastEventId = request.headers['last-event-id'];
  if (typeof lastEventId === 'string' && lastEventId !== '') return parsePosition('the Last-Event-ID header', lastEventId, partitions);
  return query.from === undefined ? null : parsePosition('query.from', query.from, partitions);
}

/** Writes the SSE stream of `options.log`'s events to `response` until the signal aborts or the log closes. */
export async function streamEvents(response: ServerResponse, options: EventStreamOptions): Promise<void> {
  const { log, filter, signal } = options;
  const position = options.from ?? (await endPosition(log));
  response.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-store',
    'x-accel-buffering': 'no',
  });
  // The first bytes carry the headers out at once, and say where the stream starts.
  response.write(`: runlog events from ${formatPosition(position)}\n\n`);
  const ping = setInterval(() => response.write(': ping\n\n'), options.pingEveryMs ?? EVENTS_PING_EVERY_MS);
  const partitions = position.map((_, p) => p);
  try {
    for await (const { partition, record } of tailAll(log, partitions, position, signal)) {
      position[partition] = record.offset + 1n;
      if (record.value === null) continue;
      const event = decodeEvent(record.value);
      if (!matchesFilter(event, filter)) continue;
      const data = JSON.stringify(eventJson(event, partition, record.offset));
      const message = `id: ${formatPosition(position)}\nevent: ${event.type}\ndata: ${data}\n\n`;
      if (!response.write(message) && !(await drained(response, signal))) break;
    }
  } finally {
    clearInterval(ping);
    response.end();
  }
}

/** Waits for the response's buffer to drain; false if the stream ends first. */
async function drained(response: ServerResponse, signal: AbortSignal): Promise<boolean> {
  try {
    await once(response, 'drain', { signal });
    return true;
  } catch {
    return false;
  }
}
