/**
 * The request bodies and queries of the HTTP API as TypeBox schemas. They check shape only
 * (fields, types, no unknown field); the library then checks the values (names, ranges,
 * sizes) as it does for any caller. Bytes come as `input` (base64) or `inputText` (UTF-8
 * text), exactly one (checked by the conversion, which names the field).
 */
import { Type, type Static } from '@sinclair/typebox';
import { Base64, LeaseJson, OneOf } from './shapes.ts';

const strict = { additionalProperties: false } as const;
const Name = Type.String();
const Names = Type.Array(Type.String());

/** The longest a long-poll (take, closed) may wait, ms. */
export const MAX_WAIT_MS = 60_000;
/** closed's wait when the query names none, ms. */
export const DEFAULT_CLOSED_WAIT_MS = 30_000;
const WaitMs = Type.Integer({ minimum: 0, maximum: MAX_WAIT_MS, description: 'longest wait, ms' });

export const SubmitBody = Type.Object(
  {
    tenant: Name,
    thread: Name,
    agent: Name,
    input: Type.Optional(Base64),
    inputText: Type.Optional(Type.String({ description: 'the input as UTF-8 text (instead of input)' })),
    key: Type.Optional(Name),
    strategy: Type.Optional(OneOf(['enqueue', 'reject'])),
    priority: Type.Optional(Type.Integer()),
    notBefore: Type.Optional(Type.Integer({ description: "epoch ms by the caller's wall clock" })),
    deadline: Type.Optional(Type.Integer({ description: "epoch ms by the caller's wall clock" })),
    maxAttempts: Type.Optional(Type.Integer()),
    metadata: Type.Optional(Type.Record(Type.String(), Type.String())),
  },
  strict,
);

export const CancelBody = Type.Object({ reason: Type.Optional(Type.String()) }, strict);

export const ClosedQuery = Type.Object({ waitMs: Type.Optional(WaitMs) }, strict);

export const PruneBody = Type.Object({ ticketLifetimeMs: Type.Integer(), limit: Type.Integer() }, strict);

export const TakeBody = Type.Object(
  {
    agents: Names,
    holder: Name,
    ttlMs: Type.Integer(),
    tenants: Type.Optional(Names),
    waitMs: Type.Optional(WaitMs),
  },
  strict,
);

export const TakeEntryBody = Type.Object({ holder: Name, ttlMs: Type.Integer() }, strict);

export const ExtendBody = Type.Object({ lease: LeaseJson, ttlMs: Type.Integer() }, strict);

export const StartAttemptBody = Type.Object({ lease: LeaseJson, runId: Name }, strict);

/** A defer (`{ kind: 'defer' }`) or a retry (`{ kind: 'retry', error, delayMs? }`); the library refuses a mix. */
export const YieldRequestJson = Type.Object(
  { kind: OneOf(['defer', 'retry']), error: Type.Optional(Type.String()), delayMs: Type.Optional(Type.Integer()) },
  strict,
);
export const YieldBody = Type.Object({ lease: LeaseJson, request: YieldRequestJson }, strict);

export const CloseRequestJson = Type.Object(
  {
    status: OneOf(['succeeded', 'failed', 'cancelled']),
    result: Type.Optional(Base64),
    resultText: Type.Optional(Type.String({ description: 'the result as UTF-8 text (instead of result)' })),
    error: Type.Optional(Type.String()),
  },
  strict,
);
export const CloseBody = Type.Object({ lease: LeaseJson, request: CloseRequestJson }, strict);

export const SubmitBatchBody = Type.Object({ requests: Type.Array(SubmitBody) }, strict);

export const TakeStartedBody = Type.Object(
  {
    agents: Names,
    holder: Name,
    ttlMs: Type.Integer(),
    tenants: Type.Optional(Names),
    max: Type.Optional(Type.Integer({ description: 'most entries to take (default 1, at most 10,000)' })),
    maxAttempts: Type.Optional(Type.Integer({ description: "caps each entry's maxAttempts: one with none left is leased unstarted" })),
  },
  strict,
);

export const CloseBatchBody = Type.Object(
  {
    closes: Type.Array(CloseBody),
    entries: Type.Optional(
      Type.Boolean({ description: 'false: each closed item is answered { closed: true }, without its entry (a Worker has no use for it)' }),
    ),
  },
  strict,
);

export const NextDueBody = Type.Object({ agents: Names, tenants: Type.Optional(Names) }, strict);

export type SubmitBody = Static<typeof SubmitBody>;
export type CancelBody = Static<typeof CancelBody>;
export type ClosedQuery = Static<typeof ClosedQuery>;
export type PruneBody = Static<typeof PruneBody>;
export type TakeBody = Static<typeof TakeBody>;
export type TakeEntryBody = Static<typeof TakeEntryBody>;
export type ExtendBody = Static<typeof ExtendBody>;
export type StartAttemptBody = Static<typeof StartAttemptBody>;
export type YieldBody = Static<typeof YieldBody>;
export type CloseRequestJson = Static<typeof CloseRequestJson>;
export type CloseBody = Static<typeof CloseBody>;
export type NextDueBody = Static<typeof NextDueBody>;
export type SubmitBatchBody = Static<typeof SubmitBatchBody>;
export type TakeStartedBody = Static<typeof TakeStartedBody>;
export type CloseBatchBody = Static<typeof CloseBatchBody>;
