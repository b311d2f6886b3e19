/**
 * One fixed event of every type, the values the golden files in test/fixtures/golden/ hold.
 * Keyed by golden file name. Never change an entry whose file is committed: add new ones
 * (a new schema version gets new files; an older file's expected value changes only by the
 * defaults a newer reader schema fills in).
 */
import type { RunlogEvent } from '../../src/events/types.ts';

const base = { tenant: 'acme', thread: 'ticket-42', entryId: 'p3-000000000007', at: 1_767_225_600_000 } as const;

export const GOLDEN_EVENTS: Readonly<Record<string, RunlogEvent>> = {
  'Submitted.v1.bin': {
    ...base,
    type: 'Submitted',
    seq: 7,
    agent: 'summarise',
    input: new TextEncoder().encode('{"doc":"ü"}'),
    key: 'req-9f2c',
    strategy: 'reject',
    priority: -3,
    notBefore: 1_767_225_660_000,
    deadline: 1_767_229_200_000,
    maxAttempts: 5,
    metadata: { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01', source: 'api' },
  },
  'Leased.v1.bin': { ...base, type: 'Leased', holder: 'worker-a/1234', epoch: 2, expiresAt: 1_767_225_630_000, deferredAttempts: 1 },
  'LeaseExtended.v1.bin': {
    ...base,
    type: 'LeaseExtended',
    holder: 'worker-a/1234',
    epoch: 2,
    expiresAt: 1_767_225_645_000,
    deferredAttempts: 1,
  },
  'AttemptStarted.v1.bin': { ...base, type: 'AttemptStarted', runId: 'run-01J9Z', attempt: 2, epoch: 2 },
  'Yielded.v1.bin': {
    ...base,
    type: 'Yielded',
    epoch: 2,
    kind: 'retry',
    error: 'Error: upstream 503',
    notBefore: 1_767_225_602_000,
    deferredAttempts: 2,
  },
  'CancelRequested.v1.bin': { ...base, type: 'CancelRequested', reason: 'superseded', deferredAttempts: 0 },
  'CancelRequested.v2.bin': { ...base, type: 'CancelRequested', reason: 'superseded', deferredAttempts: 1 },
  'Closed.v1.bin': {
    ...base,
    type: 'Closed',
    outcome: 'succeeded',
    result: Uint8Array.of(0, 1, 254, 255),
    error: null,
    deferredAttempts: 0,
  },
  'Closed.v2.bin': {
    ...base,
    type: 'Closed',
    outcome: 'succeeded',
    result: Uint8Array.of(0, 1, 254, 255),
    error: null,
    deferredAttempts: 2,
  },
  'ThreadDeleted.v1.bin': { ...base, type: 'ThreadDeleted', deferredAttempts: 0 },
  'ThreadDeleted.v2.bin': { ...base, type: 'ThreadDeleted', deferredAttempts: 1 },
  'EntriesPruned.v1.bin': {
    tenant: '',
    thread: '',
    entryId: '',
    at: 1_767_312_000_000,
    type: 'EntriesPruned',
    entryIds: ['p3-000000000001', 'p3-000000000002'],
    issuedThrough: 9_007_199_254_740_000,
  },
  'TicketKeyCreated.v1.bin': {
    tenant: '',
    thread: '',
    entryId: '',
    at: 1_767_225_500_000,
    type: 'TicketKeyCreated',
    secret: Uint8Array.of(0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff),
    legacyThrough: 41,
  },
  'CommandAnswered.v1.bin': {
    tenant: 'acme',
    thread: 'ticket-42',
    entryId: null,
    at: 1_767_225_600_500,
    type: 'CommandAnswered',
    requestId: 'req-7a1/ü',
    command: 'submit',
    created: false,
    code: 'QueueFull',
    message: 'tenant "acme" has 100 open entries, its capacity',
  },
};
