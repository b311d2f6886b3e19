/**
 * Roles and tenant scope (WIRE "Auth"). A caller's role decides which routes it may call
 * (403 otherwise; admin may call every route). Its tenants decide what it may see: another
 * tenant's entry answers exactly as an unknown ticket would, without asking the queue, so an
 * answer never tells whether that tenant's entry exists; a submit for another tenant is 403;
 * a lease of another tenant is refused as a lease that is not current.
 */
import { RunlogError } from '../errors.ts';
import { describe } from '../describe.ts';
import { partitionOfEntryId } from '../queue/entry-id.ts';
import type { Lease } from '../queue/types.ts';
import type { Access } from './route.ts';
import type { Caller } from './types.ts';

export function mayCall(caller: Caller, access: Access): boolean {
  return access === 'public' || caller.roles.has('admin') || access.some((role) => caller.roles.has(role));
}

export function forbiddenRoute(caller: Caller, access: Access, summary: string): RunlogError {
  const roles = access === 'public' ? '' : access.join(' or ');
  return new RunlogError('Forbidden', `${caller.name} may not ${summary}: it needs the role ${roles}`);
}

export function inScope(caller: Caller, tenant: string): boolean {
  return caller.tenants === 'all' || caller.tenants.has(tenant);
}

/**
 * The queue's answer for a ticket id it never issued: what another tenant's entry reads as.
 * An id not shaped like a ticket is refused as the queue refuses it (entry-id.ts); one that
 * is, as decide.ts's lookUp answers an id no partition issued: both word it alike, so the
 * answer is the same whether or not the id names a partition the server has.
 */
export function unknownTicket(entryId: string): RunlogError {
  partitionOfEntryId(entryId, Infinity);
  return new RunlogError('TicketNotFound', `ticket ${describe(entryId)} was never issued`);
}

/** Throws TicketNotFound, as for an unknown ticket, unless `tenant` is in the caller's scope. */
export function requireVisible(caller: Caller, tenant: string, entryId: string): void {
  if (!inScope(caller, tenant)) throw unknownTicket(entryId);
}

export function requireSubmitScope(caller: Caller, tenant: string): void {
  if (!inScope(caller, tenant)) throw new RunlogError('Forbidden', `${caller.name} may not submit for tenant ${JSON.stringify(tenant)}`);
}

/** A lease of another tenant: refused as not current, saying nothing of the entry. */
export function requireLeaseScope(caller: Caller, lease: Lease): void {
  if (inScope(caller, lease.tenant)) return;
  throw new RunlogError(
    'LeaseNotCurrent',
    `lease epoch ${lease.epoch} of ${JSON.stringify(lease.holder)} on entry ${lease.entryId} is not current (tenant ${JSON.stringify(lease.tenant)} is outside ${caller.name}'s scope)`,
  );
}

/**
 * The tenants a take (or nextDueAt) may look at: the request's, within the caller's scope.
 * Undefined: every tenant (an unscoped caller naming none). An empty intersection is 403.
 */
export function takeTenants(caller: Caller, requested: readonly string[] | undefined): string[] | undefined {
  if (caller.tenants === 'all') return requested === undefined ? undefined : [...requested];
  const allowed = caller.tenants;
  const tenants = requested === undefined ? [...allowed] : requested.filter((tenant) => allowed.has(tenant));
  if (tenants.length === 0) {
    throw new RunlogError('Forbidden', `${caller.name} may take only from its tenants; none of ${JSON.stringify(requested)} is one`);
  }
  return tenants;
}
