/** Admins' handlers: delete a thread, prune closed entries. */
import { RunlogError } from '../../errors.ts';
import type { PruneBody } from '../../wire/index.ts';
import type { RouteRequest } from '../route.ts';
import { inScope } from '../scope.ts';

export async function deleteThread({ queue, caller, params }: RouteRequest): Promise<{ deleted: number }> {
  const { tenant, thread } = params as { tenant: string; thread: string };
  // Another tenant's thread reads as an empty one.
  if (!inScope(caller, tenant)) return { deleted: 0 };
  return { deleted: await queue.deleteThread(tenant, thread) };
}

/** Pruning spans every tenant: only an unscoped admin may. */
export async function prune({ queue, caller, body }: RouteRequest<PruneBody>): Promise<{ pruned: number }> {
  if (caller.tenants !== 'all') {
    throw new RunlogError('Forbidden', `${caller.name} may not prune: pruning spans every tenant, and its token is scoped to some`);
  }
  return { pruned: await queue.prune(body.ticketLifetimeMs, body.limit) };
}
