/**
 * The answers of the HTTP API as TypeBox schemas: the library's types (src/queue/types.ts) as
 * JSON, with bytes as standard base64 and a partition's error as a problem body. The OpenAPI
 * document is generated from these, and their Static types are what the conversions build.
 */
import { Type, type Static, type TLiteral, type TSchema, type TUnion } from '@sinclair/typebox';
import { ERROR_CODES } from '../errors.ts';

/** A string of the given words (anyOf of consts in JSON Schema). */
export function OneOf<const T extends string>(words: readonly T[], options: { description?: string } = {}): TUnion<TLiteral<T>[]> {
  return Type.Union(
    words.map((word) => Type.Literal(word)),
    options,
  );
}

export function Nullable<T extends TSchema>(schema: T) {
  return Type.Union([schema, Type.Null()]);
}

/** Bytes on the wire: standard base64 with padding. */
export const Base64 = Type.String({ contentEncoding: 'base64', description: 'bytes, standard base64 with padding' });
export const StoreTime = Type.Integer({ description: 'store-clock time, epoch ms' });

export const ErrorBody = Type.Object(
  {
    type: Type.String({ description: 'urn:runlog:error:<code>' }),
    title: Type.String(),
    status: Type.Integer(),
    code: OneOf(ERROR_CODES),
    message: Type.String(),
    retriable: Type.Boolean(),
    owner: Type.Optional(Type.String({ description: "NotOwner: the base URL of the node that owns the call's partition, when known" })),
  },
  { description: 'A RunlogError (application/problem+json)' },
);

export const LeaseJson = Type.Object(
  {
    tenant: Type.String(),
    thread: Type.String(),
    entryId: Type.String(),
    agent: Type.String(),
    holder: Type.String(),
    epoch: Type.Integer(),
    expiresAt: StoreTime,
  },
  { additionalProperties: false },
);

export const AttemptJson = Type.Object({ runId: Type.String(), attempt: Type.Integer(), epoch: Type.Integer(), startedAt: StoreTime });

export const EntryJson = Type.Object({
  entryId: Type.String(),
  tenant: Type.String(),
  thread: Type.String(),
  agent: Type.String(),
  input: Base64,
  key: Nullable(Type.String()),
  priority: Type.Integer(),
  notBefore: Nullable(StoreTime),
  deadline: Nullable(StoreTime),
  maxAttempts: Type.Integer(),
  metadata: Type.Record(Type.String(), Type.String()),
  submittedAt: StoreTime,
  status: OneOf(['open', 'closed']),
  lease: Nullable(LeaseJson),
  attempts: Type.Array(AttemptJson),
  deferredAttempts: Type.Integer(),
  outcome: Nullable(OneOf(['succeeded', 'failed', 'cancelled', 'expired', 'threadDeleted'])),
  result: Nullable(Base64),
  error: Nullable(Type.String()),
  closedAt: Nullable(StoreTime),
});

export const TicketJson = Type.Object({ tenant: Type.String(), thread: Type.String(), entryId: Type.String(), created: Type.Boolean() });

export const TakenJson = Type.Object({ lease: LeaseJson, entry: EntryJson });

const Count = Type.Integer({ minimum: 0 });
export const QueueMetricsJson = Type.Object({
  enqueued: Count,
  processed: Count,
  succeeded: Count,
  failed: Count,
  retried: Count,
  expired: Count,
  cancelled: Count,
  dropped: Count,
  totalWaitMs: Type.Number(),
  maxWaitMs: Type.Number(),
  totalExecMs: Type.Number(),
  maxExecMs: Type.Number(),
  open: Count,
  warnings: Type.Record(Type.String(), Count),
});

export const PartitionHealthJson = Type.Object({
  partition: Type.Integer(),
  mode: OneOf(['serving', 'draining', 'rebuilding', 'down', 'stopped', 'unowned', 'acquiring', 'releasing']),
  error: Type.Optional(ErrorBody),
});

export const StartedJson = Type.Object({ lease: LeaseJson, entry: EntryJson, attempt: Nullable(AttemptJson) });

/** A batch item's answer: its value under `key`, or its own refusal. */
function BatchResults<K extends string, T extends TSchema>(key: K, value: T) {
  return Type.Object({
    results: Type.Array(Type.Union([Type.Object({ [key]: value } as { [k in K]: T }), Type.Object({ error: ErrorBody })])),
  });
}

export const TakenAnswer = Type.Object({ taken: Nullable(TakenJson) });
export const StartedAnswer = Type.Object({ started: Type.Array(StartedJson) });
export const SubmittedAnswer = BatchResults('ticket', TicketJson);
export const ClosedBatchAnswer = BatchResults('entry', EntryJson);
/** close-batch's answer with `entries: false`. */
export const ClosesAnswer = BatchResults('closed', Type.Literal(true));
export const ClosedAnswer = Type.Object({ entry: Nullable(EntryJson) });
export const EntriesAnswer = Type.Object({ entries: Type.Array(EntryJson) });
export const DeletedAnswer = Type.Object({ deleted: Count });
export const PrunedAnswer = Type.Object({ pruned: Count });
export const YieldedAnswer = Type.Object({ yielded: Type.Boolean() });
export const NextDueAnswer = Type.Object({ nextDueAt: Nullable(StoreTime) });
export const HealthAnswer = Type.Object({ partitions: Type.Array(PartitionHealthJson) });
export const NowAnswer = Type.Object({ now: StoreTime });
export const HealthzAnswer = Type.Object({ status: Type.Literal('ok') });
export const ReadyzAnswer = Type.Object({ ready: Type.Boolean(), partitions: Type.Array(PartitionHealthJson) });

export const NodeJson = Type.Object({
  node: Type.String({ description: "a node's stable id" }),
  url: Type.String({ description: 'the base URL the node advertises' }),
});
export const ClusterAnswer = Type.Object(
  {
    group: Nullable(Type.String({ description: 'the consumer group of the nodes; null: a single server, not a cluster' })),
    generation: Type.Integer({ minimum: 0, description: "the group generation this node's map is of (0: not a cluster)" }),
    partitions: Type.Integer({ minimum: 1 }),
    self: NodeJson,
    members: Type.Array(NodeJson),
    owners: Type.Array(Nullable(Type.String()), {
      description: 'per partition, the base URL of the node that owns it; null while unassigned',
    }),
  },
  { description: 'Who serves which partition. A single server answers group null and owns every partition.' },
);

export type ErrorBody = Static<typeof ErrorBody>;
export type NodeJson = Static<typeof NodeJson>;
export type ClusterAnswer = Static<typeof ClusterAnswer>;
export type LeaseJson = Static<typeof LeaseJson>;
export type AttemptJson = Static<typeof AttemptJson>;
export type EntryJson = Static<typeof EntryJson>;
export type TicketJson = Static<typeof TicketJson>;
export type TakenJson = Static<typeof TakenJson>;
export type StartedJson = Static<typeof StartedJson>;
export type SubmittedAnswer = Static<typeof SubmittedAnswer>;
export type ClosedBatchAnswer = Static<typeof ClosedBatchAnswer>;
export type ClosesAnswer = Static<typeof ClosesAnswer>;
export type QueueMetricsJson = Static<typeof QueueMetricsJson>;
export type PartitionHealthJson = Static<typeof PartitionHealthJson>;
