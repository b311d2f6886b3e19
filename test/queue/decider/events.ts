/**
 * Events and commands for the decider tests: entries of partition 0 (tenant acme, thread t1,
 * agent build unless told otherwise), numbered by their sequence, under one ticket key.
 */
import type {
  AttemptStarted,
  CancelRequested,
  Closed,
  CommandAnswered,
  EntriesPruned,
  Leased,
  Submitted,
  TicketKeyCreated,
  Yielded,
} from '../../../src/events/types.ts';
import { formatEntryId } from '../../../src/queue/entry-id.ts';
import type { Lease } from '../../../src/queue/types.ts';
import { submittedEvent } from '../../../bench/submitted-event.ts';

export const T0 = 1_700_000_000_000;
export const TTL = 1_000;
export const SECRET = new Uint8Array(16).fill(7);

export const keyCreated: TicketKeyCreated = {
  type: 'TicketKeyCreated',
  tenant: '',
  thread: '',
  entryId: '',
  at: T0,
  secret: SECRET,
  legacyThrough: 0,
};

/** An answer to a request of tenant acme on thread t1 (a submit unless told), accepted unless a code is given. */
export function answered(fields: Partial<CommandAnswered> & { requestId: string }, at = T0): CommandAnswered {
  return {
    type: 'CommandAnswered',
    tenant: 'acme',
    thread: 't1',
    entryId: null,
    at,
    command: 'submit',
    created: false,
    code: null,
    message: null,
    ...fields,
  };
}

export function idOf(seq: number): string {
  return formatEntryId(0, seq, SECRET);
}

type Place = { tenant?: string; thread?: string };

function ids(seq: number, place: Place = {}): { tenant: string; thread: string; entryId: string } {
  return { tenant: place.tenant ?? 'acme', thread: place.thread ?? 't1', entryId: idOf(seq) };
}

export function submitted(seq: number, extra: Partial<Submitted> = {}): Submitted {
  return submittedEvent({ ...ids(seq, extra), at: T0, seq }, { input: new TextEncoder().encode('work'), ...extra });
}

export function leased(seq: number, extra: Partial<Leased> = {}): Leased {
  return { type: 'Leased', ...ids(seq, extra), at: T0, holder: 'w', epoch: 1, expiresAt: T0 + TTL, deferredAttempts: 0, ...extra };
}

export function started(seq: number, extra: Partial<AttemptStarted> = {}): AttemptStarted {
  return { type: 'AttemptStarted', ...ids(seq, extra), at: T0, runId: `run-${seq}`, attempt: 1, epoch: 1, ...extra };
}

export function yielded(seq: number, extra: Partial<Yielded> = {}): Yielded {
  return {
    type: 'Yielded',
    ...ids(seq, extra),
    at: T0,
    epoch: 1,
    kind: 'defer',
    error: null,
    notBefore: null,
    deferredAttempts: 0,
    ...extra,
  };
}

export function closed(seq: number, extra: Partial<Closed> = {}): Closed {
  return { type: 'Closed', ...ids(seq, extra), at: T0, outcome: 'succeeded', result: null, error: null, deferredAttempts: 0, ...extra };
}

export function cancelled(seq: number, extra: Partial<CancelRequested> = {}): CancelRequested {
  return { type: 'CancelRequested', ...ids(seq, extra), at: T0, reason: null, deferredAttempts: 0, ...extra };
}

export function pruned(seqs: number[], issuedThrough: number, at = T0): EntriesPruned {
  return { type: 'EntriesPruned', tenant: '', thread: '', entryId: '', at, entryIds: seqs.map(idOf), issuedThrough };
}

/** The lease `leased(seq, extra)` granted, as a caller holds it. */
export function leaseOn(seq: number, extra: Partial<Lease> = {}): Lease {
  return { ...ids(seq, extra), agent: 'build', holder: 'w', epoch: 1, expiresAt: T0 + TTL, ...extra };
}
