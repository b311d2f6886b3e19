/** Workers' handlers: take (long-poll), take one entry, and the calls on a lease: extend, start an attempt, yield, close. */
import type { Attempt, Lease, TakeRequest, YieldRequest } from '../../queue/types.ts';
import {
  closeRequestFromJson,
  entryToJson,
  takenToJson,
  type CloseBody,
  type EntryJson,
  type ExtendBody,
  type NextDueBody,
  type StartAttemptBody,
  type TakeBody,
  type TakeEntryBody,
  type TakenJson,
  type YieldBody,
} from '../../wire/index.ts';
import { takeWaiting } from '../long-poll-take.ts';
import type { RouteRequest } from '../route.ts';
import { requireLeaseScope, requireVisible, takeTenants } from '../scope.ts';

/**
 * Long-poll (long-poll-take.ts): `{ taken: null }` when nothing came within waitMs or the
 * server closes. A lease taken just as the client went away is yielded back (a defer), so a
 * client gone holds nothing.
 */
export async function take({
  queue,
  caller,
  body,
  signal,
  closing,
  maxWaitMs,
}: RouteRequest<TakeBody>): Promise<{ taken: TakenJson | null }> {
  const { waitMs = 0, tenants, ...terms } = body;
  const scoped = takeTenants(caller, tenants);
  const request: TakeRequest = { ...terms, ...(scoped === undefined ? {} : { tenants: scoped }) };
  const taken = await takeWaiting(queue, request, Math.min(waitMs, maxWaitMs), signal);
  if (taken !== null && signal.aborted && !closing.aborted) {
    await queue.yield(taken.lease, { kind: 'defer' });
    return { taken: null };
  }
  return { taken: takenToJson(taken) };
}

export async function takeEntry({ queue, caller, params, body }: RouteRequest<TakeEntryBody>): Promise<{ taken: TakenJson | null }> {
  const { tenant, entryId } = params as { tenant: string; entryId: string };
  requireVisible(caller, tenant, entryId);
  return { taken: takenToJson(await queue.takeEntry(tenant, entryId, body)) };
}

export async function extend({ queue, caller, body: { lease, ttlMs } }: RouteRequest<ExtendBody>): Promise<Lease> {
  requireLeaseScope(caller, lease);
  return queue.extend(lease, ttlMs);
}

export async function startAttempt({ queue, caller, body: { lease, runId } }: RouteRequest<StartAttemptBody>): Promise<Attempt> {
  requireLeaseScope(caller, lease);
  return queue.startAttempt(lease, runId);
}

export async function yieldLease({ queue, caller, body: { lease, request } }: RouteRequest<YieldBody>): Promise<{ yielded: boolean }> {
  requireLeaseScope(caller, lease);
  // The schema takes kind, error and delayMs; the library refuses a defer with an error, or a retry without one.
  return { yielded: await queue.yield(lease, request as YieldRequest) };
}

export async function close({ queue, caller, body: { lease, request } }: RouteRequest<CloseBody>): Promise<EntryJson> {
  requireLeaseScope(caller, lease);
  return entryToJson(await queue.close(lease, closeRequestFromJson(request)));
}

export async function nextDue({ queue, caller, body }: RouteRequest<NextDueBody>): Promise<{ nextDueAt: number | null }> {
  return { nextDueAt: await queue.nextDueAt(body.agents, takeTenants(caller, body.tenants)) };
}
