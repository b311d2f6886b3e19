/**
 * The route table of the HTTP API: method, path, who may call it, its schemas, its handler.
 * Add a route with one line here (handlers live by area in handlers/). Every body and query
 * is checked against its schema before the handler runs; /openapi.json is made from this table.
 */
import { Type } from '@sinclair/typebox';
import {
  AttemptJson,
  CancelBody,
  ClusterAnswer,
  ClosedAnswer,
  ClosedQuery,
  CloseBatchBody,
  CloseBody,
  ClosedBatchAnswer,
  ClosesAnswer,
  DeletedAnswer,
  EntriesAnswer,
  EntryJson,
  ExtendBody,
  HealthAnswer,
  HealthzAnswer,
  LeaseJson,
  NextDueAnswer,
  NextDueBody,
  NowAnswer,
  PruneBody,
  PrunedAnswer,
  QueueMetricsJson,
  ReadyzAnswer,
  StartAttemptBody,
  StartedAnswer,
  SubmitBatchBody,
  SubmitBody,
  SubmittedAnswer,
  TakeBody,
  TakeEntryBody,
  TakenAnswer,
  TakeStartedBody,
  TicketJson,
  YieldBody,
  YieldedAnswer,
} from '../wire/index.ts';
import { deleteThread, prune } from './handlers/admin.ts';
import { closeBatch, submitBatch, takeStarted } from './handlers/batches.ts';
import { cancel, closed, entry, openEntries, submit } from './handlers/entries.ts';
import { close, extend, nextDue, startAttempt, take, takeEntry, yieldLease } from './handlers/leases.ts';
import { healthz, prometheusText, readyz } from './handlers/probes.ts';
import { PROMETHEUS_CONTENT_TYPE } from './prometheus.ts';
import { cluster, health, metrics, now } from './handlers/signals.ts';
import { workStream } from './handlers/work-stream.ts';
import { EventsQuery, eventStream } from './event-stream.ts';
import { AgentsAnswer, AgentsQuery, HistoryAnswer, agents, history } from './console-api.ts';
import { consoleFile, consolePage } from './console-files.ts';
import { openApiDocument, type OpenApiDocument } from './openapi.ts';
import { jsonRoute, rawRoute, type Route } from './route.ts';

const ENTRY = '/v1/tenants/{tenant}/entries/{entryId}';
const ANY_ROLE = ['producer', 'worker', 'admin'] as const;
const OpenApi = Type.Object({ openapi: Type.Literal('3.1.0'), info: Type.Object({}), paths: Type.Record(Type.String(), Type.Object({})) });

// prettier-ignore
const API: readonly Route[] = [
  jsonRoute('POST', '/v1/submit', ['producer'], { summary: 'submit an entry', body: SubmitBody, answer: TicketJson }, submit),
  jsonRoute('POST', '/v1/submit-batch', ['producer'], { summary: 'submit many entries: one append per partition; each item answered with its ticket or its own refusal', body: SubmitBatchBody, answer: SubmittedAnswer }, submitBatch),
  jsonRoute('GET', ENTRY, ['producer', 'worker'], { summary: 'read an entry', answer: EntryJson }, entry),
  jsonRoute('POST', `${ENTRY}/cancel`, ['producer'], { summary: 'cancel an entry', body: CancelBody, answer: EntryJson }, cancel),
  jsonRoute('GET', `${ENTRY}/history`, ['producer', 'worker'], { summary: "an entry's events in log order (read from the log), and the entry now (null once pruned)", answer: HistoryAnswer }, history),
  jsonRoute('GET', `${ENTRY}/closed`, ['producer'], { summary: 'wait up to waitMs for an entry to close (long-poll)', query: ClosedQuery, answer: ClosedAnswer }, closed),
  jsonRoute('GET', '/v1/tenants/{tenant}/threads/{thread}/entries', ['producer', 'worker'], { summary: "list a thread's open entries", answer: EntriesAnswer }, openEntries),
  jsonRoute('DELETE', '/v1/tenants/{tenant}/threads/{thread}', ['admin'], { summary: 'close every open entry of a thread', answer: DeletedAnswer }, deleteThread),
  jsonRoute('POST', '/v1/prune', ['admin'], { summary: 'remove up to limit entries closed at least ticketLifetimeMs ago', body: PruneBody, answer: PrunedAnswer }, prune),
  jsonRoute('POST', '/v1/take', ['worker'], { summary: 'lease the best takeable entry, waiting up to waitMs (long-poll)', body: TakeBody, answer: TakenAnswer }, take),
  jsonRoute('POST', `${ENTRY}/take`, ['worker'], { summary: 'lease one named entry now, if it is the head of its thread', body: TakeEntryBody, answer: TakenAnswer }, takeEntry),
  jsonRoute('POST', '/v1/take-started', ['worker'], { summary: 'lease up to max of the best takeable entries and start an attempt of each, durable together (no wait)', body: TakeStartedBody, answer: StartedAnswer }, takeStarted),
  jsonRoute('POST', '/v1/leases/extend', ['worker'], { summary: 'extend a lease', body: ExtendBody, answer: LeaseJson }, extend),
  jsonRoute('POST', '/v1/leases/start-attempt', ['worker'], { summary: 'record an attempt under a lease', body: StartAttemptBody, answer: AttemptJson }, startAttempt),
  jsonRoute('POST', '/v1/leases/yield', ['worker'], { summary: 'give an entry back unclosed (defer, or retry after an error)', body: YieldBody, answer: YieldedAnswer }, yieldLease),
  jsonRoute('POST', '/v1/leases/close', ['worker'], { summary: 'close an entry under its lease', body: CloseBody, answer: EntryJson }, close),
  jsonRoute('POST', '/v1/leases/close-batch', ['worker'], { summary: 'close many entries under their leases: one append per partition; each item answered with its entry (with entries: false, { closed: true }) or its own refusal', body: CloseBatchBody, answer: Type.Union([ClosedBatchAnswer, ClosesAnswer]) }, closeBatch),
  jsonRoute('POST', '/v1/next-due', ['producer', 'worker'], { summary: 'the earliest store-clock time something becomes takeable for these agents', body: NextDueBody, answer: NextDueAnswer }, nextDue),
  jsonRoute('GET', '/v1/metrics', ANY_ROLE, { summary: "the queue's metrics", answer: QueueMetricsJson }, metrics),
  jsonRoute('GET', '/v1/health', ANY_ROLE, { summary: "each partition's mode, and why one does not serve", answer: HealthAnswer }, health),
  jsonRoute('GET', '/v1/now', ANY_ROLE, { summary: 'the store clock now', answer: NowAnswer }, now),
  jsonRoute('GET', '/v1/cluster', ANY_ROLE, { summary: 'who serves which partition: the group, its members and each partition\'s owner (a single server owns them all)', answer: ClusterAnswer }, cluster),
  jsonRoute('GET', '/v1/agents', ANY_ROLE, { summary: "each agent's backlog now (open, running, waiting, the oldest waiting) and its counts over the last minutes (submitted, started, retried, closed by outcome), over the token's tenants", query: AgentsQuery, answer: AgentsAnswer }, agents),
  rawRoute('GET', '/v1/work', ['worker'], { summary: "Server-Sent Events: a `work` event each time the queue's onWork fires (coalesced), a ping comment every 15 s", contentType: 'text/event-stream' }, workStream),
  rawRoute('GET', '/v1/events', ['admin'], { summary: 'Server-Sent Events of the decoded events of the log, filtered by tenant, thread and entry, resumable from an id (Last-Event-ID or ?from=; from=0: the whole log; default: from the end)', query: EventsQuery, contentType: 'text/event-stream' }, eventStream),
  rawRoute('GET', '/console', 'public', { summary: 'the web console (read-only; it asks for a token, or takes one from the URL fragment #token=...)', contentType: 'text/html' }, consolePage),
  rawRoute('GET', '/console/{file}', 'public', { summary: "the web console's scripts and style sheet", contentType: 'text/javascript' }, consoleFile),
  jsonRoute('GET', '/healthz', 'public', { summary: 'the process serves HTTP', answer: HealthzAnswer }, healthz),
  jsonRoute('GET', '/readyz', 'public', { summary: 'every partition serves; a cluster node: joined, and every partition assigned to it serves (else 503)', answer: ReadyzAnswer }, readyz),
  rawRoute('GET', '/metrics', 'public', { operationId: 'getPrometheusMetrics', summary: "Prometheus metrics: the queue's counters, open entries, warnings, partition modes, HTTP requests", contentType: PROMETHEUS_CONTENT_TYPE }, prometheusText),
];

let document: OpenApiDocument | undefined;

export const ROUTES: readonly Route[] = [
  ...API,
  jsonRoute(
    'GET',
    '/openapi.json',
    'public',
    { summary: 'this OpenAPI 3.1 document', answer: OpenApi },
    async () => (document ??= openApiDocument(ROUTES)),
  ),
];
