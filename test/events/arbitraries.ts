/** fast-check arbitraries of every runlog event, covering the edges the codec must keep. */
import fc from 'fast-check';
import type { RunlogEvent } from '../../src/events/types.ts';
import type { RunlogCommand } from '../../src/events/command-types.ts';

/** The codec's longs: every safe integer. */
export const LONG_LIMIT = Number.MAX_SAFE_INTEGER;

const text = fc.string({ unit: 'binary', maxLength: 40 });
// Biased toward the ends of the range, where a double-based zigzag loses bits.
export const long = fc.oneof(
  fc.integer({ min: -LONG_LIMIT, max: LONG_LIMIT }),
  fc.integer({ min: 0, max: 2 ** 20 }).map((d) => LONG_LIMIT - d),
  fc.integer({ min: 0, max: 2 ** 20 }).map((d) => d - LONG_LIMIT),
);
const int = fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 });
const bytes = fc.uint8Array({ maxLength: 300 });
const orNull = <T>(arb: fc.Arbitrary<T>): fc.Arbitrary<T | null> => fc.option(arb, { nil: null });
const metadata = fc.dictionary(
  text.filter((k) => k !== '__proto__'),
  text,
  { noNullPrototype: true, maxKeys: 5 },
);

/** Plain objects, as decoded events are (fast-check would also make null-prototype ones). */
const record = <T>(model: { [K in keyof T]: fc.Arbitrary<T[K]> }): fc.Arbitrary<T> => fc.record(model, { noNullPrototype: true });

const base = { tenant: text, thread: text, entryId: text, at: long };

export const anyEvent: fc.Arbitrary<RunlogEvent> = fc.oneof(
  record({
    ...base,
    type: fc.constant('Submitted' as const),
    seq: long,
    agent: text,
    input: bytes,
    key: orNull(text),
    strategy: fc.constantFrom('enqueue' as const, 'reject' as const),
    priority: int,
    notBefore: orNull(long),
    deadline: orNull(long),
    maxAttempts: int,
    metadata,
  }),
  record({ ...base, type: fc.constant('Leased' as const), holder: text, epoch: long, expiresAt: long, deferredAttempts: int }),
  record({ ...base, type: fc.constant('LeaseExtended' as const), holder: text, epoch: long, expiresAt: long, deferredAttempts: int }),
  record({ ...base, type: fc.constant('AttemptStarted' as const), runId: text, attempt: int, epoch: long }),
  record({
    ...base,
    type: fc.constant('Yielded' as const),
    epoch: long,
    kind: fc.constantFrom('defer' as const, 'retry' as const),
    error: orNull(text),
    notBefore: orNull(long),
    deferredAttempts: int,
  }),
  record({ ...base, type: fc.constant('CancelRequested' as const), reason: orNull(text), deferredAttempts: int }),
  record({
    ...base,
    type: fc.constant('Closed' as const),
    outcome: fc.constantFrom('succeeded' as const, 'failed' as const, 'cancelled' as const, 'expired' as const, 'threadDeleted' as const),
    result: orNull(bytes),
    error: orNull(text),
    deferredAttempts: int,
  }),
  record({ ...base, type: fc.constant('ThreadDeleted' as const), deferredAttempts: int }),
  record({ ...base, type: fc.constant('EntriesPruned' as const), entryIds: fc.array(text, { maxLength: 20 }), issuedThrough: long }),
  record({ ...base, type: fc.constant('TicketKeyCreated' as const), secret: bytes, legacyThrough: long }),
  record({
    ...base,
    entryId: orNull(text),
    type: fc.constant('CommandAnswered' as const),
    requestId: text,
    command: fc.constantFrom('submit' as const, 'cancel' as const),
    created: fc.boolean(),
    code: orNull(text),
    message: orNull(text),
  }),
);

/** Every command of the commands topic. */
export const anyCommand: fc.Arbitrary<RunlogCommand> = fc.oneof(
  record({
    type: fc.constant('SubmitCommand' as const),
    requestId: text,
    tenant: text,
    thread: text,
    agent: text,
    input: bytes,
    key: orNull(text),
    strategy: orNull(fc.constantFrom('enqueue' as const, 'reject' as const)),
    priority: orNull(int),
    notBefore: orNull(long),
    deadline: orNull(long),
    maxAttempts: orNull(int),
    metadata,
  }),
  record({ type: fc.constant('CancelCommand' as const), requestId: text, tenant: text, thread: text, entryId: text, reason: orNull(text) }),
);
