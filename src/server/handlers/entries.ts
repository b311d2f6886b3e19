/** Producers' handlers: submit, read an entry, cancel it, wait for its close, a thread's open entries. */
import type { Ticket } from '../../queue/types.ts';
import {
  DEFAULT_CLOSED_WAIT_MS,
  entryToJson,
  submitFromJson,
  type CancelBody,
  type ClosedQuery,
  type EntryJson,
  type SubmitBody,
} from '../../wire/index.ts';
import type { RouteRequest } from '../route.ts';
import { inScope, requireSubmitScope, requireVisible } from '../scope.ts';

type EntryParams = { tenant: string; entryId: string };

export async function submit({ queue, caller, body }: RouteRequest<SubmitBody>): Promise<Ticket> {
  requireSubmitScope(caller, body.tenant);
  return queue.submit(submitFromJson(body));
}

export async function entry({ queue, caller, params }: RouteRequest): Promise<EntryJson> {
  const { tenant, entryId } = params as EntryParams;
  requireVisible(caller, tenant, entryId);
  return entryToJson(await queue.entry(tenant, entryId));
}

export async function cancel({ queue, caller, params, body }: RouteRequest<CancelBody>): Promise<EntryJson> {
  const { tenant, entryId } = params as EntryParams;
  requireVisible(caller, tenant, entryId);
  return entryToJson(await queue.cancel(tenant, entryId, body.reason));
}

/**
 * Long-poll: the entry once closed, or `{ entry: null }` when waitMs passes first or the
 * server closes. A client that goes away aborts the wait (the queue then holds nothing of it).
 */
export async function closed(request: RouteRequest<undefined, ClosedQuery>): Promise<{ entry: EntryJson | null }> {
  const { queue, caller, query, signal, maxWaitMs } = request;
  const { tenant, entryId } = request.params as EntryParams;
  requireVisible(caller, tenant, entryId);
  const timeoutMs = Math.min(query.waitMs ?? DEFAULT_CLOSED_WAIT_MS, maxWaitMs);
  try {
    const closed = await queue.awaitClosed(tenant, entryId, { signal, timeoutMs });
    return { entry: closed === null ? null : entryToJson(closed) };
  } catch (error) {
    if (signal.aborted && error === signal.reason) return { entry: null };
    throw error;
  }
}

export async function openEntries({ queue, caller, params }: RouteRequest): Promise<{ entries: EntryJson[] }> {
  const { tenant, thread } = params as { tenant: string; thread: string };
  // Another tenant's thread reads as an empty one.
  if (!inScope(caller, tenant)) return { entries: [] };
  return { entries: (await queue.openEntries(tenant, thread)).map(entryToJson) };
}
