/**
 * The expected content of the golden snapshot records (test/fixtures/golden/snapshots/): a
 * PartitionState using every field (an open entry leased with an attempt, another waiting
 * after a retry, a closed one kept whole, a column, a key, answers owned and loose), and the
 * PartitionSnapshot envelope holding it.
 */
import type { PartitionState } from '../../src/events/snapshot-types.ts';

const T0 = 1_764_547_200_000;
const bytes = (text: string): Uint8Array => new TextEncoder().encode(text);

export const GOLDEN_STATE: PartitionState = {
  lastAt: T0 + 900,
  issuedThrough: 7,
  ticketKey: { secret: Uint8Array.from({ length: 16 }, (_, i) => i * 17), legacyThrough: 2 },
  metrics: {
    enqueued: 7,
    processed: 3,
    succeeded: 1,
    failed: 0,
    retried: 1,
    expired: 0,
    cancelled: 1,
    dropped: 2,
    totalWaitMs: 120,
    maxWaitMs: 80,
    totalExecMs: 45,
    maxExecMs: 30,
  },
  threads: [
    {
      tenant: 'acme',
      thread: 'order-17',
      open: [
        {
          entryId: '0-5',
          seq: 5,
          agent: 'billing',
          input: bytes('{"amount":42}'),
          key: 'order-17-charge',
          priority: 2,
          deadline: T0 + 60_000,
          maxAttempts: 3,
          metadata: { shop: 'eu' },
          submittedAt: T0 + 100,
          submittedOffset: 11,
          notBefore: null,
          lease: { holder: 'worker-1', epoch: 2, expiresAt: T0 + 30_900 },
          lastEpoch: 2,
          deferredAttempts: 0,
          attempts: [{ runId: 'run-a', attempt: 1, epoch: 2, startedAt: T0 + 850, offset: 20 }],
          outcome: null,
          result: null,
          error: null,
          closedAt: null,
        },
        {
          entryId: '0-6',
          seq: 6,
          agent: 'billing',
          input: bytes('next'),
          key: null,
          priority: 0,
          deadline: null,
          maxAttempts: 10,
          metadata: {},
          submittedAt: T0 + 200,
          submittedOffset: 14,
          notBefore: T0 + 5_000,
          lease: null,
          lastEpoch: 1,
          deferredAttempts: 1,
          attempts: [],
          outcome: null,
          result: null,
          error: null,
          closedAt: null,
        },
      ],
    },
  ],
  closedEntries: [
    {
      tenant: 'acme',
      thread: 'order-9',
      entry: {
        entryId: '0-4',
        seq: 4,
        agent: 'mail',
        input: bytes('receipt'),
        key: null,
        priority: 0,
        deadline: null,
        maxAttempts: 10,
        metadata: {},
        submittedAt: T0,
        submittedOffset: 3,
        notBefore: null,
        lease: null,
        lastEpoch: 1,
        deferredAttempts: 0,
        attempts: [{ runId: 'run-b', attempt: 1, epoch: 1, startedAt: T0 + 10, offset: 5 }],
        outcome: 'succeeded',
        result: bytes('sent'),
        error: null,
        closedAt: T0 + 40,
      },
    },
  ],
  closedIndex: [
    { name: 'seq', bytes: new Uint8Array(new Float64Array([3]).buffer), strings: [] },
    { name: 'tenants', bytes: new Uint8Array(0), strings: ['acme'] },
  ],
  submissionKeys: [{ id: 'acme\u0000order-17\u0000order-17-charge', entryId: '0-5' }],
  answers: [
    { tenant: 'acme', requestId: 'req-1', command: 'submit', entryId: '0-5', code: null, message: null, at: T0 + 100, owned: true },
    {
      tenant: 'acme',
      requestId: 'req-2',
      command: 'cancel',
      entryId: null,
      code: 'TicketNotFound',
      message: 'no such ticket',
      at: T0 + 300,
      owned: false,
    },
  ],
};

export const GOLDEN_ENVELOPE = {
  logId: 'file:0123456789abcdef0123456789abcdef',
  partition: 0,
  nextOffset: 42n,
  takenAt: T0 + 1_000,
} as const;
