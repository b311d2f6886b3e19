/**
 * Per-tenant usage, what billing needs: entries submitted, attempts started, run time (see
 * entry-runs.ts for when an attempt runs), entries closed. Counts what the log holds: after
 * compaction, pruned entries' records are gone, and a rebuild counts without them.
 */
import { defineProjection } from './projection.ts';
import { stepEntry, type EntryRun } from './entry-runs.ts';

export interface TenantUsage {
  tenant: string;
  entries: number;
  attempts: number;
  runMs: number;
  closed: number;
}

export interface TenantUsageState {
  tenants: Map<string, TenantUsage>;
  /** Open entries followed (entry-runs.ts). */
  open: Map<string, EntryRun>;
}

export const tenantUsage = defineProjection<TenantUsageState>({
  name: 'tenant-usage',
  initial: () => ({ tenants: new Map(), open: new Map() }),
  handles: ['Submitted', 'Leased', 'LeaseExtended', 'AttemptStarted', 'Yielded', 'Closed', 'CancelRequested', 'ThreadDeleted'],
  evolve(state, event) {
    const step = stepEntry(state.open, event);
    if (step === null) return state;
    const usage = usageOf(state, step.entry.tenant);
    if (event.type === 'Submitted') usage.entries++;
    if (event.type === 'AttemptStarted') usage.attempts++;
    if (step.ranMs !== null) usage.runMs += step.ranMs;
    if (step.closedAs !== null) usage.closed++;
    return state;
  },
});

function usageOf(state: TenantUsageState, tenant: string): TenantUsage {
  let usage = state.tenants.get(tenant);
  if (usage === undefined) {
    usage = { tenant, entries: 0, attempts: 0, runMs: 0, closed: 0 };
    state.tenants.set(tenant, usage);
  }
  return usage;
}

/** The usage of every tenant, by tenant name. */
export function tenantUsageRows(state: TenantUsageState): TenantUsage[] {
  return [...state.tenants.values()]
    .sort((a, b) => (a.tenant < b.tenant ? -1 : a.tenant > b.tenant ? 1 : 0))
    .map((usage) => ({ ...usage }));
}
